//go:build resources

package resources

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/parleyforum/parley/tests/parleybin"
)

// server is the parley serve under measure: one process on the forum's database, started
// again whenever a case needs a process that holds no memory of the cases before it.
type server struct {
	t    *testing.T
	args []string // parley serve's flags, --addr and --db included

	cmd    *exec.Cmd
	pid    int
	base   string // http://127.0.0.1:port
	stderr *lockedBuffer
	done   chan error
	// freshKiB is the process's resident memory once it has served one request of every
	// kind (warm): what a case's growth is counted from when it starts on a fresh process.
	freshKiB int64
	// killed is set when the guard killed the process for holding more than ceilingMB.
	killed    atomic.Bool
	stopGuard chan struct{}
	starts    int
	startTime time.Duration // spent starting the process, in all
	warm      func(*server)
}

// ceilingMB is the most the process may grow before the guard kills it (SIGKILL): far over
// every bound of the matrix, so that a cell over its bound reads as such, and far under what
// the machine has, so that an unbounded route does not take the machine with it.
const ceilingMB = 1536

// restartAboveMB: a case starts on a process started again when the running one holds more
// than this over its fresh size. Go keeps the heap a case freed for a while before it gives
// it back to the system, and a later case would grow into it unseen; a start costs a fraction
// of a second.
const restartAboveMB = 16

var listeningLine = regexp.MustCompile(`listening on (http://[^\s]+)`)

func startServer(t *testing.T, args []string, warm func(*server)) *server {
	s := &server{t: t, args: args, warm: warm}
	s.start()
	t.Cleanup(s.stop)
	return s
}

func (s *server) start() {
	t := s.t
	t.Helper()
	s.starts++
	began := time.Now()
	defer func() { s.startTime += time.Since(began) }()
	s.stderr, s.done = new(lockedBuffer), make(chan error, 1)
	s.killed.Store(false)
	s.cmd = exec.Command(parleyBinary, append([]string{"serve"}, s.args...)...)
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
	s.pid = s.cmd.Process.Pid
	listening := make(chan string, 1)
	cmd, done := s.cmd, s.done
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if m := listeningLine.FindStringSubmatch(sc.Text()); m != nil {
				select {
				case listening <- m[1]:
				default:
				}
			}
		}
		done <- cmd.Wait()
	}()
	select {
	case s.base = <-listening:
	case err := <-done:
		done <- err
		t.Fatalf("parley serve ended before it listened: %v; stderr %q", err, s.stderr)
	case <-time.After(time.Minute):
		t.Fatalf("parley serve did not listen within a minute; stderr %q", s.stderr)
	}
	if s.warm != nil {
		s.warm(s)
	}
	s.freshKiB = s.rssKiB()
	s.stopGuard = make(chan struct{})
	go s.guard(s.cmd.Process, s.freshKiB, s.stopGuard)
}

// guard kills the process when it holds more than ceilingMB over its fresh size.
func (s *server) guard(p *os.Process, fresh int64, stop chan struct{}) {
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-stop:
			return
		case <-tick.C:
		}
		if kib, err := statusKiB(p.Pid, "VmRSS"); err == nil && kib-fresh > ceilingMB<<10 {
			s.killed.Store(true)
			_ = p.Kill()
			return
		}
	}
}

// stop ends the process with SIGKILL: a graceful shutdown would wait for the streams the
// cases left (a feed notices its client has gone at its next heartbeat), and nothing of the
// process is kept.
func (s *server) stop() {
	if s.cmd == nil || s.cmd.Process == nil {
		return
	}
	close(s.stopGuard)
	_ = s.cmd.Process.Kill()
	err := <-s.done
	s.done <- err
	if out := s.stderr.String(); strings.Contains(out, "panic") {
		s.t.Errorf("parley serve: %s", out)
	}
	s.cmd = nil
}

// alive reports whether the process still runs.
func (s *server) alive() bool {
	select {
	case err := <-s.done:
		s.done <- err
		return false
	default:
		return true
	}
}

// settle makes sure the next case starts on a process that runs and holds no more than
// restartAboveMB over its fresh size, starting it again otherwise.
func (s *server) settle() {
	if s.alive() && !s.killed.Load() && s.rssKiB()-s.freshKiB <= restartAboveMB<<10 {
		return
	}
	s.stop()
	s.start()
}

// restart starts the process again: for a case of many rows at once, which must find no slot
// or share still held by a case before it.
func (s *server) restart() {
	s.stop()
	s.start()
}

// peakKiB is what the process held at most, in KiB, since resetPeak.
func (s *server) peakKiB() int64 {
	kib, _ := statusKiB(s.pid, "VmHWM")
	return kib
}

func (s *server) rssKiB() int64 {
	kib, _ := statusKiB(s.pid, "VmRSS")
	return kib
}

// resetPeak sets the process's high-water mark (VmHWM) to what it holds now: Linux does so
// when 5 is written to /proc/PID/clear_refs.
func (s *server) resetPeak() {
	if err := os.WriteFile("/proc/"+strconv.Itoa(s.pid)+"/clear_refs", []byte("5"), 0); err != nil {
		s.t.Fatalf("resetting the peak of the server's memory: %v", err)
	}
}

// growth is one measure of a case: the most the process held over what it held when the
// case began, in MB; killed when the guard ended the process.
type growth struct {
	MB     float64
	killed bool
}

func (g growth) String() string {
	if g.killed {
		return fmt.Sprintf("> %d MB (killed)", ceilingMB)
	}
	return fmt.Sprintf("%.0f MB", g.MB)
}

// measure runs fn on a settled process and returns how much the process grew while it ran.
func (s *server) measure(fn func()) growth {
	s.settle()
	before := s.rssKiB()
	s.resetPeak()
	fn()
	if s.killed.Load() || !s.alive() {
		return growth{killed: true, MB: ceilingMB}
	}
	return growth{MB: max(0, float64(s.peakKiB()-before)/1024)}
}

// statusKiB reads a field of /proc/PID/status given in kB.
func statusKiB(pid int, field string) (int64, error) {
	raw, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0, err
	}
	for _, line := range bytes.Split(raw, []byte("\n")) {
		if rest, ok := bytes.CutPrefix(line, []byte(field+":")); ok {
			return strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(string(rest)), " kB"), 10, 64)
		}
	}
	return 0, fmt.Errorf("no %s in /proc/%d/status", field, pid)
}

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}
