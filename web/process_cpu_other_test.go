//go:build !unix

package web_test

import "time"

// processCPU cannot be read here; benchmarks leave out what they would compute from it.
func processCPU() (time.Duration, bool) { return 0, false }
