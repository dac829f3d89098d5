package web

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/parleyforum/parley/protocol"
	"github.com/parleyforum/parley/protocol/admission"
	"github.com/parleyforum/parley/storage"
	"github.com/parleyforum/parley/storage/storagetest"
)

// § 19: every route declares its admission class where it is registered. A route added to
// the app without one (app.Get instead of the router's) fails here.
func TestEveryRouteDeclaresItsClass(t *testing.T) {
	db := storagetest.Open(t, storage.SQLite)
	app, rt := build(Options{DB: db, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		Static: fstest.MapFS{"parley.css": {Data: []byte("body{}")}}})
	routes := app.GetRoutes(true)
	if len(routes) < 100 {
		t.Fatalf("only %d routes", len(routes))
	}
	handlers := map[string]bool{}
	for _, r := range routes {
		key := r.Method + " " + r.Path
		handlers[key] = true
		if rt.byTool[key] {
			continue // MCP: its tools declare their classes (mcpserver)
		}
		if !rt.classes[key].Declared() {
			t.Errorf("%s declares no admission class", key)
		}
	}
	// Handlers that serve a prefix (the static files) declare theirs too; the app's own
	// middleware, which runs for every request, is no route.
	for _, r := range app.GetRoutes() {
		if r.Path == "/" || handlers[r.Method+" "+r.Path] {
			continue
		}
		if !rt.classes["USE "+r.Path].Declared() {
			t.Errorf("%s %s (a handler of every path under it) declares no admission class", r.Method, r.Path)
		}
	}
	for key, want := range map[string]admission.Class{
		"GET /v1/threads": admission.Read, "POST /v1/messages": admission.Write, "GET /v1/inbox": admission.Listen,
		"GET /v1/feed": admission.Listen, "GET /v1/export": admission.Export, "POST /v1/imports": admission.Import,
		"POST /login": admission.Password, "GET /threads/:id/graph": admission.Drawing, "GET /threads/:id/live": admission.Listen,
		"DELETE /v1/threads": admission.Read, "USE /static": admission.Read,
	} {
		if got := rt.classes[key]; got != want {
			t.Errorf("%s is admitted as %s, want %s", key, got, want)
		}
	}
}

// A read or a write of one request waits for a slot of its class; when every slot stays taken
// for the gate's wait, it is answered 503 unavailable with Retry-After in the terms of its
// path. A long poll, which takes no slot, is answered all the same.
func TestLightWorkWaitsForItsSlot(t *testing.T) {
	db := storagetest.Open(t, storage.SQLite)
	app, rt := build(Options{DB: db, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go app.Listener(Listener(ln))
	t.Cleanup(func() { app.Shutdown() })
	base := "http://" + ln.Addr().String()

	gate := rt.svc.Gate()
	for range gate.Capacity(admission.Read) {
		release, err := gate.Acquire(context.Background(), admission.Read, "")
		if err != nil {
			t.Fatal(err)
		}
		defer release()
	}
	for _, c := range []struct {
		method, path, body string
		status             int
		media, contains    string
	}{
		{"GET", "/v1/threads", "", http.StatusServiceUnavailable, "application/json", `"reason":"unavailable"`},
		{"GET", "/login", "", http.StatusServiceUnavailable, "text/html", "busy"},
		{"POST", "/mcp", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"list_threads","arguments":{}}}`,
			http.StatusOK, "application/json", `"reason":"unavailable"`},
		// A write has slots of its own, and a long poll takes none.
		{"GET", "/v1/inbox", "", http.StatusUnauthorized, "application/json", `"reason":"unauthenticated"`},
		{"POST", "/v1/messages", `{}`, http.StatusUnauthorized, "application/json", `"reason":"unauthenticated"`},
	} {
		req, _ := http.NewRequest(c.method, base+c.path, strings.NewReader(c.body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != c.status || !strings.HasPrefix(resp.Header.Get("Content-Type"), c.media) || !strings.Contains(string(body), c.contains) {
			t.Errorf("%s %s with every read slot taken: %d %s %.300s, want %d %s with %q",
				c.method, c.path, resp.StatusCode, resp.Header.Get("Content-Type"), body, c.status, c.media, c.contains)
		}
		if resp.StatusCode == http.StatusServiceUnavailable && resp.Header.Get("Retry-After") == "" {
			t.Errorf("%s %s: 503 without Retry-After", c.method, c.path)
		}
	}
}

// A request's body is received before it takes its slot: clients that send their bodies
// slowly, as many as there are places for writes, hold their connections, never the places,
// and a write that comes meanwhile is answered.
func TestSlowBodiesHoldNoSlot(t *testing.T) {
	db := storagetest.Open(t, storage.SQLite)
	app, rt := build(Options{DB: db, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	slots := rt.svc.Gate().Capacity(admission.Write)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	limits := protocol.DefaultLimits()
	limits.MaxConnectionsPerAddress = 2*slots + 8
	go app.Listener(ListenerWith(ln, ListenerOptions{Limits: limits}))
	t.Cleanup(func() { app.Shutdown() })

	for range slots {
		conn, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { conn.Close() })
		// 100 bytes declared, 1 sent: the rest never comes within the test.
		if _, err := io.WriteString(conn, "POST /v1/messages HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"); err != nil {
			t.Fatal(err)
		}
	}
	for start := time.Now(); app.Server().GetOpenConnectionsCount() < int32(slots); time.Sleep(10 * time.Millisecond) {
		if time.Since(start) > 20*time.Second {
			t.Fatalf("%d of %d slow connections taken", app.Server().GetOpenConnectionsCount(), slots)
		}
	}
	resp, err := http.Post("http://"+ln.Addr().String()+"/v1/messages", "application/json", strings.NewReader(`{"kind":"ask","body":"hello"}`))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("a write beside %d slow bodies: %d %.200s, want 401 (its turn, without a token)", slots, resp.StatusCode, body)
	}
}
