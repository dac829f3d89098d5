package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/parleyforum/parley/storage"
	"github.com/parleyforum/parley/tests/parleybin"
)

// server is one running "parley serve".
type server struct {
	t      *testing.T
	cmd    *exec.Cmd
	lines  chan string // standard output, line by line, closed at its end
	stderr *bytes.Buffer
	mu     sync.Mutex
	output []string // every line read so far
	base   string   // from the listening line
}

var listeningLine = regexp.MustCompile(`listening on (http://[^\s]+)`)

// startServe starts the binary and waits until it says it is listening.
func startServe(t *testing.T, args ...string) *server {
	t.Helper()
	s := &server{t: t, lines: make(chan string, 100), stderr: new(bytes.Buffer)}
	s.cmd = exec.Command(parleyBinary, append([]string{"serve", "--addr", "127.0.0.1:0"}, args...)...)
	s.cmd.Dir = t.TempDir()
	s.cmd.Env = parleybin.Env()
	s.cmd.Stderr = s.stderr
	stdout, err := s.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if s.cmd.ProcessState == nil {
			_ = s.cmd.Process.Kill()
			_ = s.cmd.Wait()
		}
	})
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			s.mu.Lock()
			s.output = append(s.output, sc.Text())
			s.mu.Unlock()
			s.lines <- sc.Text()
		}
		close(s.lines)
	}()
	m := listeningLine.FindStringSubmatch(s.next("the listening line"))
	if m == nil {
		t.Fatalf("serve's first line does not say where it listens; stdout %q, stderr %q", s.output, s.stderr)
	}
	s.base = m[1]
	return s
}

// next is the next line of standard output.
func (s *server) next(what string) string {
	s.t.Helper()
	select {
	case line, ok := <-s.lines:
		if !ok {
			s.t.Fatalf("serve ended before %s; stderr %q", what, s.stderr)
		}
		return line
	case <-time.After(time.Minute):
		s.t.Fatalf("serve printed no %s within a minute", what)
	}
	return ""
}

// setupURL reads the line announcing the setup address and returns the address.
func (s *server) setupURL() *url.URL {
	s.t.Helper()
	line := s.next("the setup address")
	m := regexp.MustCompile(`(http://\S+/setup\?code=\S+)`).FindStringSubmatch(line)
	if m == nil {
		s.t.Fatalf("no setup address in %q", line)
	}
	u, err := url.Parse(m[1])
	if err != nil {
		s.t.Fatal(err)
	}
	return u
}

// stop sends sig and waits for the process to end cleanly.
func (s *server) stop(sig syscall.Signal) {
	s.t.Helper()
	if err := s.cmd.Process.Signal(sig); err != nil {
		s.t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		for range s.lines { // drain, so the process never blocks on a full pipe
		}
		done <- s.cmd.Wait()
	}()
	select {
	case err := <-done:
		if err != nil {
			s.t.Fatalf("serve after %v: %v; stderr %q", sig, err, s.stderr)
		}
	case <-time.After(time.Minute):
		s.t.Fatalf("serve did not stop within a minute of %v", sig)
	}
	// Only the log may appear, without errors: the access log, and warnings such as a build
	// made without the vendored browser files.
	for _, line := range strings.Split(strings.TrimSpace(s.stderr.String()), "\n") {
		text, json := strings.HasPrefix(line, "time="), strings.HasPrefix(line, `{"time":`)
		if line != "" && (!text && !json || strings.Contains(line, "level=ERROR") || strings.Contains(line, `"level":"ERROR"`)) {
			s.t.Errorf("serve wrote to standard error: %q", s.stderr)
			break
		}
	}
	if !strings.Contains(strings.Join(s.output, "\n"), "stopped") {
		s.t.Errorf("serve did not say it stopped: %q", s.output)
	}
}

// said reports whether any line so far contains text.
func (s *server) said(text string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return strings.Contains(strings.Join(s.output, "\n"), text)
}

func get(t *testing.T, u string) (int, string) {
	t.Helper()
	resp, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(body)
}

func TestServe(t *testing.T) {
	eachKind(t, func(t *testing.T, dbURL string) {
		// First start on an empty database: it migrates, listens on the real port, and
		// prints the setup address.
		srv := startServe(t, "--db", dbURL)
		if strings.HasSuffix(srv.base, ":0") {
			t.Fatalf("serve printed the port asked for, not the one it got: %s", srv.base)
		}
		if code, body := get(t, srv.base+"/healthz"); code != http.StatusOK || strings.TrimSpace(body) != `{"status":"ok"}` {
			t.Errorf("GET /healthz = %d %q", code, body)
		}
		for range 5 {
			if err := oversizedHeadersRefused(srv.base); err != nil {
				t.Errorf("headers of 1 MiB, all sent before the answer is read: %v, want the 413", err)
			}
		}
		setup := srv.setupURL()
		if "http://"+setup.Host != srv.base {
			t.Errorf("the setup address %s is not on the server's address %s", setup, srv.base)
		}
		code := setup.Query().Get("code")
		if len(code) < 20 {
			t.Errorf("setup code %q is too short to be unguessable", code)
		}
		if status, body := get(t, setup.String()); status != http.StatusOK || !strings.Contains(body, `data-page="setup"`) {
			t.Errorf("GET the setup address = %d %q", status, body)
		}
		if status, _ := get(t, srv.base+"/setup?code=wrong"); status != http.StatusNotFound {
			t.Errorf("GET /setup with a wrong code = %d, want 404", status)
		}
		srv.stop(syscall.SIGTERM)

		db := openDB(t, dbURL)
		ctx := context.Background()
		key, err := db.Setting(ctx, storage.SettingSessionKey)
		if err != nil {
			t.Fatalf("no session key kept: %v", err)
		}
		if b, err := hex.DecodeString(key); err != nil || len(b) != 32 {
			t.Errorf("the kept session key %q is not 32 random bytes in hex", key)
		}

		// Second start: the same setup address, the same session key.
		srv = startServe(t, "--db", dbURL)
		if again := srv.setupURL(); again.Query().Get("code") != code {
			t.Errorf("the setup code changed across restarts: %q, then %q", code, again.Query().Get("code"))
		}
		srv.stop(syscall.SIGINT)
		if again, _ := db.Setting(ctx, storage.SettingSessionKey); again != key {
			t.Errorf("the session key changed across restarts")
		}

		// Once an account exists there is no setup address any more.
		invocation{args: []string{"user", "add", "--name", "alice", "--password-stdin", "--db", dbURL}, stdin: "a long password\n"}.
			run(t).ok(t, "user add")
		srv = startServe(t, "--db", dbURL, "--session-key", strings.Repeat("k", 40))
		if status, _ := get(t, srv.base+"/setup?code="+url.QueryEscape(code)); status != http.StatusNotFound {
			t.Errorf("GET the old setup address after the first account = %d, want 404", status)
		}
		srv.stop(syscall.SIGTERM)
		if srv.said("setup?code=") {
			t.Errorf("serve printed a setup address although an account exists: %q", srv.output)
		}
		if again, _ := db.Setting(ctx, storage.SettingSessionKey); again != key {
			t.Errorf("a session key given on the command line replaced the kept one")
		}
	})
}

// serve on an address in use fails before it touches the database: the second forum's
// database is neither created nor migrated.
func TestServeAddressInUse(t *testing.T) {
	first := startServe(t, "--db", "sqlite:"+t.TempDir()+"/first.db")
	addr := strings.TrimPrefix(first.base, "http://")
	second := t.TempDir() + "/second.db"
	r := parley(t, "serve", "--addr", addr, "--db", "sqlite:"+second)
	r.fails(t, "serve on a taken address", exitRuntime, "cannot listen on "+addr)
	if _, err := os.Stat(second); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("serve on a taken address created its database %s first (%v)", second, err)
	}
	first.stop(syscall.SIGTERM)
}

// oversizedHeadersRefused sends headers of 1 MiB, all of them before it reads, from a small
// send buffer, and reads the answer: the server must have closed the connection gracefully
// (read on after its refusal, web.Listener), or the writes end in a reset.
func oversizedHeadersRefused(base string) error {
	conn, err := net.Dial("tcp", strings.TrimPrefix(base, "http://"))
	if err != nil {
		return err
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(20 * time.Second))
	_ = conn.(*net.TCPConn).SetWriteBuffer(16 << 10)
	if _, err := io.WriteString(conn, "GET /v1/manifest HTTP/1.1\r\nHost: x\r\nX-Big: "+strings.Repeat("a", 1<<20)); err != nil {
		return err
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		return err
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestEntityTooLarge || !strings.Contains(string(body), "payload_too_large") {
		return fmt.Errorf("%d %.200s", resp.StatusCode, body)
	}
	return nil
}
