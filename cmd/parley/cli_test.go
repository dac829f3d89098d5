package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/parleyforum/parley/storage"
	"github.com/parleyforum/parley/storage/storagetest"
	"github.com/parleyforum/parley/tests/parleybin"
)

// These tests run the built binary, as an operator or a script would, and hold it to
// OPERATOR.md: exit statuses, one-line errors, output shapes.

type result struct {
	stdout, stderr string
	code           int
}

// invocation is one run of the binary: arguments, extra environment, standard input.
type invocation struct {
	args  []string
	env   []string
	stdin string
}

func parley(t *testing.T, args ...string) result {
	t.Helper()
	return invocation{args: args}.run(t)
}

// run executes the binary in a folder of its own (so that a default database would land
// there) with an environment free of the developer's PARLEY_* settings.
func (in invocation) run(t *testing.T) result {
	t.Helper()
	var stdin io.Reader
	if in.stdin != "" {
		stdin = strings.NewReader(in.stdin)
	}
	return in.runWith(t, stdin)
}

func (in invocation) runWith(t *testing.T, stdin io.Reader) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, parleyBinary, in.args...)
	cmd.Dir = t.TempDir()
	cmd.Env = append(parleybin.Env(), in.env...)
	cmd.Stdin = stdin
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var exitErr *exec.ExitError
	r := result{stdout: stdout.String(), stderr: stderr.String()}
	switch {
	case err == nil:
	case errors.As(err, &exitErr):
		r.code = exitErr.ExitCode()
	default:
		t.Fatalf("running parley %s: %v", strings.Join(in.args, " "), err)
	}
	return r
}

// ok fails the test unless the run succeeded with nothing on standard error.
func (r result) ok(t *testing.T, what string) result {
	t.Helper()
	if r.code != 0 || r.stderr != "" {
		t.Fatalf("%s: exit %d, stderr %q, stdout %q", what, r.code, r.stderr, r.stdout)
	}
	return r
}

// fails checks the exit status and that standard error is one line, "parley: …", mentioning
// want, and no stack trace.
func (r result) fails(t *testing.T, what string, code int, want string) {
	t.Helper()
	if r.code != code {
		t.Errorf("%s: exit %d, want %d (stderr %q)", what, r.code, code, r.stderr)
	}
	msg := strings.TrimSuffix(r.stderr, "\n")
	if strings.Contains(msg, "\n") || !strings.HasPrefix(msg, "parley: ") {
		t.Errorf("%s: stderr is not one line \"parley: …\": %q", what, r.stderr)
	}
	if strings.Contains(msg, "goroutine") || strings.Contains(msg, "panic") {
		t.Errorf("%s: stderr shows a crash: %q", what, r.stderr)
	}
	if !strings.Contains(msg, want) {
		t.Errorf("%s: stderr %q does not mention %q", what, r.stderr, want)
	}
}

// eachKind runs fn on a fresh, empty database URL of each kind.
func eachKind(t *testing.T, fn func(t *testing.T, url string)) {
	for _, kind := range storagetest.Kinds() {
		t.Run(string(kind), func(t *testing.T) {
			t.Parallel()
			fn(t, storagetest.NewURL(t, kind))
		})
	}
}

func openDB(t *testing.T, url string) *storage.DB {
	t.Helper()
	db, err := storage.Open(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// output is the standard output of a run that must succeed.
func (r result) output(t *testing.T) string {
	t.Helper()
	return r.ok(t, "parley").stdout
}
