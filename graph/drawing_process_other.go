//go:build !linux

package graph

import (
	"os"
	"os/exec"
)

// thisProgram is the program to start as a drawing process: this one.
func thisProgram() (string, error) { return os.Executable() }

// withDrawingProcessAttributes: other systems have no death signal; a drawing process still
// ends with its drawing or when its context ends.
func withDrawingProcessAttributes(*exec.Cmd) {}

// peakMemory is not measured on other systems.
func peakMemory(*os.ProcessState) int64 { return 0 }
