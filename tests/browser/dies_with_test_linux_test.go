package browser

import (
	"os/exec"
	"syscall"
)

// diesWithTest makes the kernel kill cmd when the test process ends, however it ends: a
// test binary killed by go test's timeout or by a signal must not leave a parley serve
// behind.
func diesWithTest(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
