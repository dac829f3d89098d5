package graph

import (
	"os"
	"os/exec"
	"syscall"
)

// thisProgram is the program to start as a drawing process: this one, by the link the kernel
// keeps, which still names it when its file was replaced (an upgrade while it runs).
func thisProgram() (string, error) { return "/proc/self/exe", nil }

// withDrawingProcessAttributes has the kernel kill a drawing process when the program that
// started it dies, so that no drawing outlives the server.
func withDrawingProcessAttributes(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}

// peakMemory is the most resident memory the ended process held, in bytes (Linux counts
// ru_maxrss in KiB).
func peakMemory(s *os.ProcessState) int64 {
	if s == nil {
		return 0
	}
	if ru, ok := s.SysUsage().(*syscall.Rusage); ok {
		return ru.Maxrss * 1024
	}
	return 0
}
