// Package parleybin builds the parley command for tests that run it as a process, the way an
// operator does: the command-line tests and the crash test.
package parleybin

import (
	"os"
	"os/exec"
	"path/filepath"
)

// Build compiles cmd/parley into a new folder beside the running test binary — go test made
// that folder's parent for this run and removes it afterwards, which a folder of the test's
// own could not count on, since storagetest.Main ends the process. A non-empty version is
// stamped in as a release build stamps its own; under the race detector the command is built
// with it too, so that the process under test is checked as well.
func Build(version string) (string, error) {
	self, err := os.Executable()
	if err != nil {
		return "", err
	}
	dir, err := os.MkdirTemp(filepath.Dir(self), "parley-bin-")
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "parley")
	args := []string{"build", "-o", bin}
	if version != "" {
		args = append(args, "-ldflags", "-X main.version="+version)
	}
	if raceEnabled {
		args = append(args, "-race")
	}
	cmd := exec.Command("go", append(args, "github.com/parleyforum/parley/cmd/parley")...)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return "", err
	}
	return bin, nil
}
