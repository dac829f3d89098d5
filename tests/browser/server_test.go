package browser

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/parleyforum/parley/tests/parleybin"
)

// forumServer is one running parley serve, as an operator starts it.
type forumServer struct {
	base     string // http://127.0.0.1:PORT
	setupURL string // the one-time setup address it printed
	dbURL    string
	dir      string // its working folder, where the command-line runs happen too
}

var (
	listeningLine = regexp.MustCompile(`listening on (http://\S+)`)
	setupLine     = regexp.MustCompile(`(http://\S+/setup\?code=\S+)`)
)

// startServer runs parley serve on a fresh, empty database URL and waits for the two lines
// the operator reads: where it listens and the setup address for the first account. The
// server is stopped with SIGINT when the test ends, and must then stop cleanly.
func startServer(t *testing.T, dbURL string) *forumServer {
	t.Helper()
	s := &forumServer{dbURL: dbURL, dir: t.TempDir()}
	cmd := exec.Command(parleyBinary, "serve", "--addr", "127.0.0.1:0", "--db", dbURL)
	cmd.Dir = s.dir
	cmd.Env = parleybin.Env()
	diesWithTest(cmd)
	// Read only once the process has ended: Wait returns after the copy into it is done.
	stderr := new(bytes.Buffer)
	cmd.Stderr = stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	lines := make(chan string, 16)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			select {
			case lines <- sc.Text():
			default: // nobody reads after the start; the rest is not needed
			}
		}
		done <- cmd.Wait()
	}()
	t.Cleanup(func() { stopServer(t, cmd, done, stderr) })

	timeout := time.After(time.Minute)
	for s.base == "" || s.setupURL == "" {
		select {
		case line := <-lines:
			if m := listeningLine.FindStringSubmatch(line); m != nil {
				s.base = m[1]
			}
			if m := setupLine.FindStringSubmatch(line); m != nil {
				s.setupURL = m[1]
			}
		case err := <-done:
			done <- err
			t.Fatalf("parley serve ended before it printed its addresses: %v; stderr %q", err, stderr)
		case <-timeout:
			_ = cmd.Process.Kill()
			done <- <-done
			t.Fatalf("parley serve printed no listening line and setup address within a minute; stderr %q", stderr)
		}
	}
	return s
}

func stopServer(t *testing.T, cmd *exec.Cmd, done chan error, stderr *bytes.Buffer) {
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Errorf("stopping parley serve: %v", err)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("parley serve after SIGINT: %v; stderr %q", err, stderr)
		}
	case <-time.After(time.Minute):
		_ = cmd.Process.Kill()
		<-done
		t.Errorf("parley serve did not stop within a minute of SIGINT")
	}
	if out := stderr.String(); strings.Contains(out, "DATA RACE") || strings.Contains(out, "panic") {
		t.Errorf("parley serve: %s", out)
	}
}

// command runs a parley command against the server's database, as an operator does beside
// the running server, and returns its standard output.
func (s *forumServer) command(t *testing.T, stdin string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, parleyBinary, append(args, "--db", s.dbURL)...)
	cmd.Dir = s.dir
	cmd.Env = parleybin.Env()
	cmd.Stdin = strings.NewReader(stdin)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("parley %s: %v; stderr %q", strings.Join(args, " "), err, stderr.String())
	}
	return stdout.String()
}

// agentToken creates an agent token with parley token create and returns its secret.
func (s *forumServer) agentToken(t *testing.T, handle, rights string, flags ...string) string {
	t.Helper()
	args := append([]string{"token", "create", "--handle", handle, "--rights", rights, "--json"}, flags...)
	out := s.command(t, "", args...)
	var created struct {
		Token string `json:"token"`
	}
	if err := json.Unmarshal([]byte(out), &created); err != nil || created.Token == "" {
		t.Fatalf("parley token create --json printed %q", out)
	}
	return created.Token
}
