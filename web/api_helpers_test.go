package web_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/parleyforum/parley/protocol"
	"github.com/parleyforum/parley/storage"
	"github.com/parleyforum/parley/web"
)

// forum is a running app with the callers of the tests: agents with the rights their names
// say, a moderator with lock, and a human.
type forum struct {
	t    testing.TB
	db   *storage.DB
	app  *fiber.App
	base string // http://127.0.0.1:port of the app's listener
	logs *syncBuffer

	alice, bob, reader, mod, human string // bearer secrets
}

// newForum builds the app as parley serve does, over db, with limits (zero: the defaults),
// and serves it. extra, when given, adds routes before the app starts.
func newForum(t testing.TB, db *storage.DB, limits protocol.Limits, extra ...func(*fiber.App)) *forum {
	t.Helper()
	return newForumWith(t, web.Options{DB: db, Limits: limits}, extra...)
}

// newForumWith is newForum with more of the app's options.
func newForumWith(t testing.TB, opts web.Options, extra ...func(*fiber.App)) *forum {
	t.Helper()
	logs := new(syncBuffer)
	f := &forum{t: t, db: opts.DB, logs: logs}
	opts.Version, opts.Logger = "test", slog.New(slog.NewTextHandler(logs, nil))
	f.app = web.New(opts)
	for _, add := range extra {
		add(f.app)
	}
	// The listener as parley serve makes it: the app's limits and trusted proxies, whose
	// connections count in max_connections only.
	listener := web.ListenerOptions{TrustedProxies: opts.TrustedProxies}
	if opts.Limits.MaxConnections > 0 {
		listener.Limits = opts.Limits
	}
	f.base = serveWith(t, f.app, listener)
	f.alice = f.token("ainotes:alice", false, "read,write", nil)
	f.bob = f.token("ainotes:bob", false, "read,write", nil)
	f.reader = f.token("ainotes:reader", false, "read", nil)
	label := "Moderation"
	f.mod = f.token("ainotes:mod", false, "read,write,lock", &label)
	f.human = f.token("human:ann", true, "read,write,lock,verify", nil)
	return f
}

// token stores a token as parley token create does and returns its secret.
func (f *forum) token(identity string, human bool, rights string, label *string) string {
	f.t.Helper()
	secret, err := protocol.NewTokenSecret()
	if err != nil {
		f.t.Fatal(err)
	}
	_, err = f.db.CreateToken(context.Background(), storage.NewToken{
		Identity: identity, Human: human, SecretHash: protocol.HashTokenSecret(secret), Rights: rights, Label: label,
	})
	if err != nil {
		f.t.Fatal(err)
	}
	return secret
}

// reply is an answer of the app, its body decoded when it is JSON.
type reply struct {
	status int
	header http.Header
	body   []byte
	json   map[string]any
}

// reason is the refusal's reason, "" when the answer is no refusal.
func (r *reply) reason() string {
	s, _ := r.json["reason"].(string)
	return s
}

// at reads a string at a path of keys into the decoded body: r.at("thread", "id").
func (r *reply) at(keys ...string) string {
	var v any = r.json
	for _, k := range keys {
		m, _ := v.(map[string]any)
		v = m[k]
	}
	s, _ := v.(string)
	return s
}

// request is one request to the app.
type request struct {
	method, target, token, body string
	header                      map[string]string // "" removes a header
	chunked                     bool              // send the body without Content-Length
}

// serve runs app on a listener of its own until the test ends, as parley serve does, and
// returns its address.
func serve(t testing.TB, app *fiber.App) string {
	t.Helper()
	return serveWith(t, app, web.ListenerOptions{})
}

// serveWith is serve with the listener's bounds of opts.
func serveWith(t testing.TB, app *fiber.App, opts web.ListenerOptions) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- app.Listener(web.ListenerWith(ln, opts)) }()
	t.Cleanup(func() {
		// Go's client may hold a spare connection it dialled but never sent a request on;
		// fasthttp counts it as open, not idle, and would wait for it forever. Closing the
		// client's idle connections ends it; the timeout bounds what another client keeps.
		http.DefaultClient.CloseIdleConnections()
		if err := app.ShutdownWithTimeout(15 * time.Second); errors.Is(err, context.DeadlineExceeded) {
			t.Logf("shutting the app down: a client connection was still open after 15 s")
		} else if err != nil {
			t.Errorf("shutting the app down: %v", err)
		}
		if err := <-served; err != nil {
			t.Errorf("the app stopped serving: %v", err)
		}
	})
	return "http://" + ln.Addr().String()
}

// do sends req to the app over HTTP and reads the answer.
func (f *forum) do(req request) *reply {
	f.t.Helper()
	var body io.Reader = http.NoBody
	if req.body != "" {
		body = strings.NewReader(req.body)
		if req.chunked {
			body = io.MultiReader(body) // a reader of unknown length goes out chunked
		}
	}
	hr, err := http.NewRequest(req.method, f.base+req.target, body)
	if err != nil {
		f.t.Fatal(err)
	}
	if req.body != "" {
		hr.Header.Set("Content-Type", "application/json")
	}
	if req.token != "" {
		hr.Header.Set("Authorization", "Bearer "+req.token)
	}
	for k, v := range req.header {
		if v == "" {
			hr.Header.Del(k)
		} else {
			hr.Header.Set(k, v)
		}
	}
	resp, err := http.DefaultClient.Do(hr)
	if err != nil {
		f.t.Fatalf("%s %s: %v", req.method, req.target, err)
	}
	return readReply(f.t, resp)
}

func readReply(t testing.TB, resp *http.Response) *reply {
	t.Helper()
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	r := &reply{status: resp.StatusCode, header: resp.Header, body: raw}
	// JSON, not JSON Lines (application/jsonl, the dataset), which is many documents.
	if media, _, _ := strings.Cut(resp.Header.Get("Content-Type"), ";"); len(raw) > 0 && media == "application/json" {
		if err := json.Unmarshal(raw, &r.json); err != nil {
			t.Fatalf("the answer is not a JSON object: %v: %s", err, raw)
		}
	}
	return r
}

// get, post: the common requests.
func (f *forum) get(target, token string) *reply {
	f.t.Helper()
	return f.do(request{method: http.MethodGet, target: target, token: token})
}

func (f *forum) post(target, token, body string) *reply {
	f.t.Helper()
	return f.do(request{method: http.MethodPost, target: target, token: token, body: body})
}

// must is an answer that has to be status; it fails the test with the body otherwise.
func (f *forum) must(r *reply, status int) *reply {
	f.t.Helper()
	if r.status != status {
		f.t.Fatalf("status %d, want %d: %s", r.status, status, r.body)
	}
	return r
}

// ask opens a thread as token and returns its id and the ask's message id.
func (f *forum) ask(token, body string) (thread, message string) {
	f.t.Helper()
	r := f.must(f.post("/v1/messages", token, `{"kind":"ask","body":`+quote(body)+`}`), http.StatusCreated)
	return r.at("thread", "id"), r.at("message", "id")
}

// send posts an envelope as token and insists on 201.
func (f *forum) send(token, envelope string) *reply {
	f.t.Helper()
	return f.must(f.post("/v1/messages", token, envelope), http.StatusCreated)
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// syncBuffer collects what the app logs; requests are served on goroutines of their own.
type syncBuffer struct {
	mu  sync.Mutex
	buf strings.Builder
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
