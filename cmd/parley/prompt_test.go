//go:build linux

package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/parleyforum/parley/storage"
	"github.com/parleyforum/parley/storage/storagetest"
	"github.com/parleyforum/parley/tests/parleybin"
	"github.com/parleyforum/parley/web/password"
)

// openTerminal opens a pseudo-terminal: what the child reads from tty, the test writes to
// keyboard.
func openTerminal(t *testing.T) (keyboard, tty *os.File) {
	t.Helper()
	// Non-blocking, so that os.NewFile hands it to the poller and read deadlines work.
	fd, err := unix.Open("/dev/ptmx", unix.O_RDWR|unix.O_NOCTTY|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatalf("no pseudo-terminal on this machine: %v", err)
	}
	ptmx := os.NewFile(uintptr(fd), "/dev/ptmx")
	t.Cleanup(func() { ptmx.Close() })
	n, err := unix.IoctlGetInt(int(ptmx.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Fatal(err)
	}
	if err := unix.IoctlSetPointerInt(int(ptmx.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Fatal(err)
	}
	pts, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pts.Close() })
	return ptmx, pts
}

// user add without --password-stdin asks twice on the terminal, and what is typed there is
// not shown.
func TestUserAddPrompt(t *testing.T) {
	url := storagetest.NewURL(t, storage.SQLite)
	for _, tc := range []struct {
		name, user, first, second string
		code                      int
	}{
		{"same twice", "terminal", "typed on a terminal", "typed on a terminal", exitOK},
		{"two different", "mistyped", "typed on a terminal", "typed on a terminaL", exitUsage},
	} {
		t.Run(tc.name, func(t *testing.T) {
			keyboard, tty := openTerminal(t)
			cmd := exec.Command(parleyBinary, "user", "add", "--name", tc.user, "--db", url)
			cmd.Dir, cmd.Env, cmd.Stdin = t.TempDir(), parleybin.Env(), tty
			prompts, err := cmd.StderrPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			stderr := bufio.NewReader(prompts)
			// Type each answer once its prompt is there and the terminal has stopped echoing,
			// as a person would, who is never as quick as the microseconds in between.
			for _, step := range []struct{ prompt, typed string }{
				{"Password for " + tc.user + ": ", tc.first},
				{"Repeat it: ", tc.second},
			} {
				waitFor(t, stderr, step.prompt)
				waitForNoEcho(t, tty)
				if _, err := keyboard.WriteString(step.typed + "\n"); err != nil {
					t.Fatal(err)
				}
			}
			rest, _ := io.ReadAll(stderr)
			err = cmd.Wait()
			code := 0
			var exitErr *exec.ExitError
			if errors.As(err, &exitErr) {
				code = exitErr.ExitCode()
			} else if err != nil {
				t.Fatal(err)
			}
			if code != tc.code {
				t.Fatalf("exit %d, want %d; stderr %q", code, tc.code, rest)
			}

			if err := keyboard.SetReadDeadline(time.Now().Add(200 * time.Millisecond)); err != nil {
				t.Fatal(err)
			}
			shown, _ := io.ReadAll(keyboard)
			if strings.Contains(string(shown), "typed on") {
				t.Errorf("the terminal echoed the password: %q", shown)
			}
		})
	}
	db := openDB(t, url)
	u, err := db.UserByName(context.Background(), "terminal")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.UserByName(context.Background(), "mistyped"); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("two different passwords created the account anyway: %v", err)
	}
	if ok, err := password.Verify(u.PasswordHash, "typed on a terminal"); err != nil || !ok {
		t.Errorf("the password typed at the prompt does not verify: %v, %v", ok, err)
	}
}

// waitFor reads r until it has seen text.
func waitFor(t *testing.T, r *bufio.Reader, text string) {
	t.Helper()
	var seen strings.Builder
	for !strings.HasSuffix(seen.String(), text) {
		b, err := r.ReadByte()
		if err != nil {
			t.Fatalf("waiting for %q, got %q: %v", text, seen.String(), err)
		}
		seen.WriteByte(b)
	}
}

// waitForNoEcho waits until the terminal no longer echoes what is typed.
func waitForNoEcho(t *testing.T, tty *os.File) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		termios, err := unix.IoctlGetTermios(int(tty.Fd()), unix.TCGETS)
		if err != nil {
			t.Fatal(err)
		}
		if termios.Lflag&unix.ECHO == 0 {
			return
		}
	}
	t.Fatal("the prompt never turned the terminal's echo off")
}
