package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/parleyforum/parley/storage/storagetest"
)

// testVersion is stamped into the binary under test, as a release build stamps its version.
const testVersion = "v0.0.0-clitest"

// parleyBinary is the parley command built once for every test of this package.
var parleyBinary string

func TestMain(m *testing.M) {
	bin, err := buildParley()
	if err != nil {
		fmt.Fprintf(os.Stderr, "building parley: %v\n", err)
		os.Exit(2)
	}
	parleyBinary = bin
	storagetest.Main(m)
}

// buildParley builds the command beside the test binary: go test made that folder for this
// run and removes it afterwards, which a folder of our own could not count on, since
// storagetest.Main ends the process.
func buildParley() (string, error) {
	self, err := os.Executable()
	if err != nil {
		return "", err
	}
	dir, err := os.MkdirTemp(filepath.Dir(self), "parley-bin-")
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "parley")
	args := []string{"build", "-ldflags", "-X main.version=" + testVersion, "-o", bin}
	if raceEnabled {
		args = append(args, "-race")
	}
	cmd := exec.Command("go", append(args, ".")...)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return "", err
	}
	return bin, nil
}
