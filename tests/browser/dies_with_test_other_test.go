//go:build !linux

package browser

import "os/exec"

// diesWithTest: only Linux can tie a child's life to its parent's; elsewhere the cleanup of
// the test stops the server.
func diesWithTest(cmd *exec.Cmd) {}
