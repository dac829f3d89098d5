package soak

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"time"
)

// server is parley serve on a fixed address, started again after each kill, and the
// resident memory of every process it ran.
type server struct {
	bin, dir, dbURL, addr string
	env                   []string
	memory                *memory

	mu       sync.Mutex
	cmd      *exec.Cmd
	done     chan error
	stderr   *lockedBuffer
	lifetime int
	stopMem  context.CancelFunc
	faults   []string // what a process wrote that it never should: a panic, a data race
}

func newServer(bin, dir, dbURL string, mem *memory) (*server, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	env := []string{}
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "PARLEY_") {
			env = append(env, kv)
		}
	}
	// The agents measure durability, not the write limit.
	env = append(env, "PARLEY_LIMIT_WRITES_PER_MINUTE=1000000")
	return &server{bin: bin, dir: dir, dbURL: dbURL, addr: "127.0.0.1:" + strconv.Itoa(port), env: env, memory: mem}, nil
}

func (s *server) base() string { return "http://" + s.addr }

// start runs parley serve and returns once it listens. The address was free a moment ago and
// the last process on it was killed: a start that cannot bind is tried again.
func (s *server) start() error {
	var err error
	for attempt := 0; attempt < 20; attempt++ {
		if err = s.startOnce(); err == nil {
			return nil
		}
		time.Sleep(250 * time.Millisecond)
	}
	return err
}

func (s *server) startOnce() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	cmd := exec.Command(s.bin, "serve", "--addr", s.addr, "--db", s.dbURL)
	cmd.Dir = s.dir
	cmd.Env = s.env
	stderr := new(lockedBuffer)
	cmd.Stderr = stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	done := make(chan error, 1)
	listening := make(chan struct{}, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if strings.Contains(sc.Text(), "listening on http://") {
				select {
				case listening <- struct{}{}:
				default:
				}
			}
		}
		done <- cmd.Wait()
	}()
	select {
	case <-listening:
	case err := <-done:
		return fmt.Errorf("parley serve ended before it listened: %v\n%s", err, tail(stderr.String()))
	case <-time.After(time.Minute):
		_ = cmd.Process.Kill()
		<-done
		return fmt.Errorf("parley serve did not listen within a minute\n%s", tail(stderr.String()))
	}
	s.cmd, s.done, s.stderr = cmd, done, stderr
	s.lifetime++
	ctx, cancel := context.WithCancel(context.Background())
	s.stopMem = cancel
	go s.memory.sample(ctx, s.lifetime, cmd.Process.Pid)
	return nil
}

// kill sends SIGKILL: no shutdown, nothing flushed, connections cut.
func (s *server) kill() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd == nil {
		return fmt.Errorf("no server runs")
	}
	s.stopMem()
	if err := s.cmd.Process.Kill(); err != nil {
		return err
	}
	<-s.done
	s.ended()
	return nil
}

// stop sends SIGTERM and waits: in-flight requests finish.
func (s *server) stop() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd == nil {
		return nil
	}
	s.stopMem()
	if err := s.cmd.Process.Signal(os.Interrupt); err != nil {
		return err
	}
	var err error
	select {
	case err = <-s.done:
	case <-time.After(time.Minute):
		_ = s.cmd.Process.Kill()
		err = fmt.Errorf("parley serve did not stop within a minute of SIGINT")
		<-s.done
	}
	s.ended()
	if err != nil {
		return fmt.Errorf("parley serve after SIGINT: %v\n%s", err, tail(s.stderr.String()))
	}
	return nil
}

// ended notes what the process that just ended wrote that no server should.
func (s *server) ended() {
	out := s.stderr.String()
	for _, bad := range []string{"DATA RACE", "panic:", "fatal error:"} {
		if strings.Contains(out, bad) {
			s.faults = append(s.faults, fmt.Sprintf("server process %d wrote %q:\n%s", s.lifetime, bad, tail(out)))
		}
	}
	s.cmd = nil
}

// healthy waits until /healthz answers 200: the server and its database are back.
func (s *server) healthy(ctx context.Context, within time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, within)
	defer cancel()
	client := &http.Client{Timeout: 2 * time.Second}
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, s.base()+"/healthz", nil)
		resp, err := client.Do(req)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("/healthz did not answer 200 within %v", within)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	// A server that logs for minutes: keep its last part, where a panic would be.
	if b.b.Len() > 1<<20 {
		rest := append([]byte(nil), b.b.Bytes()[b.b.Len()-1<<19:]...)
		b.b.Reset()
		b.b.Write(rest)
	}
	return b.b.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

func tail(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > 20 {
		lines = lines[len(lines)-20:]
	}
	return strings.Join(lines, "\n")
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("cannot find a free port: %v", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
