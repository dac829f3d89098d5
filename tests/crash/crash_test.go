// Package crash kills a loaded Parley server and checks what survives: every message the
// server acknowledged (201) is there after a restart on the same database, with its body, and
// every thread still holds together — its message_count is the messages in its tree, and its
// events replay to its state. It builds the parley binary itself and runs it on SQLite and
// on Postgres.
package crash

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/parleyforum/parley/storage"
	"github.com/parleyforum/parley/storage/storagetest"
	"github.com/parleyforum/parley/tests/parleybin"
)

// parleyBinary is the parley command, built once for the tests of this package.
var parleyBinary string

func TestMain(m *testing.M) {
	bin, err := parleybin.Build("")
	if err != nil {
		fmt.Fprintf(os.Stderr, "building parley: %v\n", err)
		os.Exit(2)
	}
	parleyBinary = bin
	storagetest.Main(m)
}

const (
	identities = 3 // tokens, made with the command line
	agents     = 8 // senders at once: the identities with an extension each
	// The server is killed once this many messages have been acknowledged, or after
	// killAfter, whichever comes first: in the middle of the load either way.
	killAtAcks = 200
	killAfter  = 4 * time.Second
)

func TestKillMidLoadLosesNothingAcknowledged(t *testing.T) {
	for _, kind := range storagetest.Kinds() {
		t.Run(string(kind), func(t *testing.T) {
			t.Parallel()
			dbURL := storagetest.NewURL(t, kind)
			dir := t.TempDir()
			tokens := make([]string, identities)
			for i := range tokens {
				tokens[i] = createToken(t, dir, dbURL, fmt.Sprintf("crash-%d", i))
			}

			srv := startServe(t, dir, dbURL)
			load := startLoad(t, srv.base, tokens)
			load.waitForAcks(killAtAcks, killAfter)
			srv.kill()
			load.stop()
			acks := load.acknowledged()
			if len(acks) < 20 {
				t.Fatalf("only %d messages were acknowledged before the kill; the load did not get going", len(acks))
			}
			t.Logf("%d messages acknowledged before kill -9, %d requests cut off", len(acks), load.cut.Load())

			srv = startServe(t, dir, dbURL)
			checkAcknowledged(t, srv.base, tokens[0], acks)
			checkEveryThread(t, dbURL)
			// And the server carries on where it stopped.
			status, _ := post(t, srv.base, tokens[1], `{"kind":"ask","body":"Still here after the crash?"}`)
			if status != http.StatusCreated {
				t.Errorf("a message after the restart: status %d", status)
			}
			srv.stop()
		})
	}
}

// createToken runs parley token create and returns the secret.
func createToken(t *testing.T, dir, dbURL, handle string) string {
	t.Helper()
	cmd := exec.Command(parleyBinary, "token", "create", "--handle", handle, "--json", "--db", dbURL)
	cmd.Dir = dir
	cmd.Env = serverEnv()
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("parley token create: %v (%s)", err, stderrOf(err))
	}
	var res struct {
		Token string `json:"token"`
	}
	if err := json.Unmarshal(out, &res); err != nil || res.Token == "" {
		t.Fatalf("parley token create --json printed %q", out)
	}
	return res.Token
}

func stderrOf(err error) string {
	if ee, ok := err.(*exec.ExitError); ok {
		return string(ee.Stderr)
	}
	return ""
}

// serverEnv is the environment of a parley process: see parleybin.Env.
func serverEnv() []string { return parleybin.Env("PARLEY_LIMIT_WRITES_PER_MINUTE=1000000") }

// server is one running parley serve.
type server struct {
	t      *testing.T
	cmd    *exec.Cmd
	base   string
	stderr *lockedBuffer
	done   chan error
}

var listeningLine = regexp.MustCompile(`listening on (http://[^\s]+)`)

func startServe(t *testing.T, dir, dbURL string) *server {
	t.Helper()
	s := &server{t: t, stderr: new(lockedBuffer), done: make(chan error, 1)}
	s.cmd = exec.Command(parleyBinary, "serve", "--addr", "127.0.0.1:0", "--db", dbURL)
	s.cmd.Dir = dir
	s.cmd.Env = serverEnv()
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
			<-s.done
		}
	})
	listening := make(chan string, 1)
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
		s.done <- s.cmd.Wait()
	}()
	select {
	case s.base = <-listening:
	case err := <-s.done:
		s.done <- err
		t.Fatalf("parley serve ended before it listened: %v; stderr %q", err, s.stderr)
	case <-time.After(time.Minute):
		t.Fatalf("parley serve did not listen within a minute; stderr %q", s.stderr)
	}
	return s
}

// kill ends the server with SIGKILL: no shutdown, no flush, nothing of its own.
func (s *server) kill() {
	s.t.Helper()
	if err := s.cmd.Process.Kill(); err != nil {
		s.t.Fatal(err)
	}
	<-s.done
	s.checkStderr()
}

// stop ends the server with SIGTERM and waits for it.
func (s *server) stop() {
	s.t.Helper()
	if err := s.cmd.Process.Signal(os.Interrupt); err != nil {
		s.t.Fatal(err)
	}
	select {
	case err := <-s.done:
		if err != nil {
			s.t.Errorf("parley serve after SIGINT: %v; stderr %q", err, s.stderr)
		}
	case <-time.After(time.Minute):
		s.t.Fatal("parley serve did not stop within a minute")
	}
	s.checkStderr()
}

func (s *server) checkStderr() {
	if out := s.stderr.String(); strings.Contains(out, "DATA RACE") || strings.Contains(out, "panic") {
		s.t.Errorf("parley serve: %s", out)
	}
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

// ack is a message the server acknowledged with 201.
type ack struct {
	id, thread, kind, body string
}

// thread is a question on the load's board.
type thread struct {
	id, root string
	asker    int
}

// load is the agents sending at once: each keeps a question of its own open and answers
// and notes under the questions of others, naming the question as the parent (so nobody
// replies to itself).
type load struct {
	t      *testing.T
	base   string
	tokens []string
	client *http.Client
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
	cut    atomic.Int64 // requests that got no answer

	mu      sync.Mutex
	acks    []ack
	threads []thread
	more    chan struct{} // a signal per acknowledgement
}

func startLoad(t *testing.T, base string, tokens []string) *load {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	l := &load{t: t, base: base, tokens: tokens, ctx: ctx, cancel: cancel, more: make(chan struct{}, 1<<16),
		client: &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: agents}}}
	for a := range agents {
		l.wg.Go(func() { l.agent(a) })
	}
	t.Cleanup(l.stop)
	return l
}

func (l *load) agent(a int) {
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), uint64(a)))
	token := l.tokens[a%len(l.tokens)]
	ext := fmt.Sprintf("agent-%d", a)
	asked := false
	for n := 0; l.ctx.Err() == nil; n++ {
		kind, th := "ask", thread{}
		if asked {
			if other, ok := l.pick(a, rng); ok {
				kind, th = []string{"answer", "answer", "note"}[rng.IntN(3)], other
			}
		}
		body := fmt.Sprintf("%s %d by agent %d: %x", kind, n, a, rng.Uint64())
		env := map[string]any{"kind": kind, "body": body, "from": map[string]string{"extension": ext}}
		if th.id != "" {
			env["thread"], env["parent"] = th.id, th.root
		}
		raw, _ := json.Marshal(env)
		status, res, err := l.post(token, raw)
		if err != nil {
			l.cut.Add(1)
			return // the server is gone
		}
		if status != http.StatusCreated {
			l.t.Errorf("agent %d sent %s: status %d %s", a, raw, status, res)
			return
		}
		var sent struct {
			Message struct{ ID, Thread string } `json:"message"`
		}
		if err := json.Unmarshal(res, &sent); err != nil || sent.Message.ID == "" {
			l.t.Errorf("agent %d: unreadable answer %s", a, res)
			return
		}
		l.mu.Lock()
		l.acks = append(l.acks, ack{id: sent.Message.ID, thread: sent.Message.Thread, kind: kind, body: body})
		if kind == "ask" {
			l.threads = append(l.threads, thread{id: sent.Message.Thread, root: sent.Message.ID, asker: a})
			asked = true
		}
		l.mu.Unlock()
		l.more <- struct{}{}
	}
}

func (l *load) pick(a int, rng *rand.Rand) (thread, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for range 8 {
		if len(l.threads) == 0 {
			break
		}
		if th := l.threads[rng.IntN(len(l.threads))]; th.asker != a {
			return th, true
		}
	}
	return thread{}, false
}

func (l *load) post(token string, body []byte) (int, []byte, error) {
	req, err := http.NewRequestWithContext(l.ctx, http.MethodPost, l.base+"/v1/messages", bytes.NewReader(body))
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := l.client.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	res, err := io.ReadAll(resp.Body)
	return resp.StatusCode, res, err
}

// waitForAcks returns after n acknowledgements or after d.
func (l *load) waitForAcks(n int, d time.Duration) {
	deadline := time.After(d)
	for range n {
		select {
		case <-l.more:
		case <-deadline:
			return
		}
	}
}

func (l *load) stop() {
	l.cancel()
	l.wg.Wait()
}

func (l *load) acknowledged() []ack {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]ack(nil), l.acks...)
}

func post(t *testing.T, base, token, env string) (int, []byte) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, base+"/v1/messages", strings.NewReader(env))
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, body
}

func get(t *testing.T, base, token, path string, into any) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, base+path, nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d %s", path, resp.StatusCode, body)
	}
	if err := json.Unmarshal(body, into); err != nil {
		t.Fatalf("GET %s: %v in %s", path, err, body)
	}
}

type wireMessage struct {
	ID      string         `json:"id"`
	Kind    string         `json:"kind"`
	Body    string         `json:"body"`
	Replies []*wireMessage `json:"replies"`
}

type wireThread struct {
	ID           string `json:"id"`
	State        string `json:"state"`
	MessageCount int    `json:"message_count"`
}

type wireEvent struct {
	ID   string  `json:"id"`
	Act  string  `json:"act"`
	From *string `json:"from"`
	To   string  `json:"to"`
}

// checkAcknowledged reads every thread the load wrote to, through the restarted server: each
// acknowledged message is in its thread with the kind and body it was sent with, the thread's
// count is its tree, and its events replay to its state.
func checkAcknowledged(t *testing.T, base, token string, acks []ack) {
	t.Helper()
	byThread := map[string][]ack{}
	for _, a := range acks {
		byThread[a.thread] = append(byThread[a.thread], a)
	}
	for th, want := range byThread {
		var read struct {
			Thread   wireThread     `json:"thread"`
			Messages []*wireMessage `json:"messages"`
		}
		get(t, base, token, "/v1/threads/"+th, &read)
		stored := map[string]*wireMessage{}
		var walk func([]*wireMessage)
		walk = func(ms []*wireMessage) {
			for _, m := range ms {
				if stored[m.ID] != nil {
					t.Errorf("thread %s: message %s appears twice", th, m.ID)
				}
				stored[m.ID] = m
				walk(m.Replies)
			}
		}
		walk(read.Messages)
		for _, a := range want {
			m := stored[a.id]
			switch {
			case m == nil:
				t.Errorf("thread %s: the acknowledged %s %s is lost", th, a.kind, a.id)
			case m.Body != a.body || m.Kind != a.kind:
				t.Errorf("thread %s: %s is %s %q, was sent as %s %q", th, a.id, m.Kind, m.Body, a.kind, a.body)
			}
		}
		if read.Thread.MessageCount != len(stored) {
			t.Errorf("thread %s: message_count %d, but %d messages in its tree", th, read.Thread.MessageCount, len(stored))
		}
		var evs struct {
			Events []wireEvent `json:"events"`
		}
		get(t, base, token, "/v1/threads/"+th+"/events", &evs)
		if state := replay(t, th, evs.Events); state != read.Thread.State {
			t.Errorf("thread %s: events replay to %q, the thread says %q", th, state, read.Thread.State)
		}
	}
}

// replay runs a thread's events from the first and returns the state they lead to; each
// event must start where the one before ended.
func replay(t *testing.T, th string, evs []wireEvent) string {
	state := ""
	for i, e := range evs {
		from := ""
		if e.From != nil {
			from = *e.From
		}
		if (i == 0) != (e.From == nil) || (i > 0 && from != state) {
			t.Errorf("thread %s: event %s (%s) goes from %q, but the state was %q", th, e.ID, e.Act, from, state)
		}
		state = e.To
	}
	return state
}

// checkEveryThread looks at the database itself: in every thread, the count, the last
// message and the messages stored agree.
func checkEveryThread(t *testing.T, dbURL string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	db, err := storage.Open(ctx, dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var bad []struct {
		ID           int64 `bun:"id"`
		MessageCount int   `bun:"message_count"`
		Stored       int   `bun:"stored"`
	}
	err = db.NewRaw(`SELECT t.id, t.message_count, COUNT(m.id) AS stored FROM threads AS t
		LEFT JOIN messages AS m ON m.thread_id = t.id
		GROUP BY t.id, t.message_count, t.last_message_id
		HAVING COUNT(m.id) <> t.message_count OR MAX(m.id) <> t.last_message_id`).Scan(ctx, &bad)
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range bad {
		t.Errorf("thread %d: message_count %d, last message not the newest, or %d messages stored", b.ID, b.MessageCount, b.Stored)
	}
}
