// Package parleybin builds the parley command for tests that run it as a process, the way an
// operator does: the command-line tests, the crash test and the resource matrix.
package parleybin

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// Build compiles cmd/parley into a new folder beside the running test binary — go test made
// that folder's parent for this run and removes it afterwards, which a folder of the test's
// own could not count on, since storagetest.Main ends the process. A non-empty version is
// stamped in as a release build stamps its own; under the race detector the command is built
// with it too, so that the process under test is checked as well.
func Build(version string) (string, error) { return build(version, raceEnabled) }

// BuildUninstrumented compiles cmd/parley without the race detector, whatever the tests run
// under: for tests that measure the process's memory, which the detector's shadow memory
// multiplies several times over (tests/resources).
func BuildUninstrumented() (string, error) { return build("", false) }

func build(version string, race bool) (string, error) {
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
	if race {
		args = append(args, "-race")
	}
	cmd := exec.Command("go", append(args, "github.com/parleyforum/parley/cmd/parley")...)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return "", err
	}
	return bin, nil
}

// Env is the environment a test gives the command: this process's, without the PARLEY_
// variables (so that only what the test sets configures the command), with extra appended.
// Under the race detector a process sleeps a second before it exits (GORACE's
// atexit_sleep_ms, for races reported late); the tests run the command hundreds of times,
// and a race is reported when it happens, so the command's processes sleep 10 ms instead.
func Env(extra ...string) []string {
	var env []string
	goRace := ""
	for _, kv := range os.Environ() {
		switch {
		case strings.HasPrefix(kv, "PARLEY_"):
		case strings.HasPrefix(kv, "GORACE="):
			goRace = strings.TrimPrefix(kv, "GORACE=")
		default:
			env = append(env, kv)
		}
	}
	if raceEnabled {
		env = append(env, "GORACE="+strings.TrimSpace(goRace+" atexit_sleep_ms=10"))
	} else if goRace != "" {
		env = append(env, "GORACE="+goRace)
	}
	return append(env, extra...)
}
