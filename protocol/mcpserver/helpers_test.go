package mcpserver_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/parleyforum/parley/protocol"
	"github.com/parleyforum/parley/protocol/mcpserver"
	"github.com/parleyforum/parley/storage"
)

// forum is one Parley instance served over MCP by a real HTTP server.
type forum struct {
	t   *testing.T
	db  *storage.DB
	svc *protocol.Service
	url string
	log *logBuffer
}

func newForum(t *testing.T, db *storage.DB, limits protocol.Limits) *forum {
	t.Helper()
	svc := protocol.New(db, protocol.Options{Limits: limits, Version: "test"})
	log := &logBuffer{}
	srv := httptest.NewServer(mcpserver.New(svc, mcpserver.Options{Logger: slog.New(slog.NewTextHandler(log, nil))}))
	t.Cleanup(srv.Close)
	return &forum{t: t, db: db, svc: svc, url: srv.URL + "/mcp", log: log}
}

// token stores a token for <realm>:handle (or human:name when human) and returns its secret.
func (f *forum) token(handle, rights string, human bool) string {
	f.t.Helper()
	secret, err := protocol.NewTokenSecret()
	if err != nil {
		f.t.Fatal(err)
	}
	nt := storage.NewToken{Identity: protocol.AgentIdentity(f.svc.Realm(), handle), SecretHash: protocol.HashTokenSecret(secret), Rights: rights}
	if human {
		nt.Identity, nt.Human, nt.Rights = protocol.HumanIdentity(handle), true, protocol.AllRightsSet().String()
	}
	if _, err := f.db.CreateToken(context.Background(), nt); err != nil {
		f.t.Fatal(err)
	}
	return secret
}

// connect opens a session of the Go SDK's own client, sending secret as bearer token
// (none when empty).
func (f *forum) connect(secret string) *mcp.ClientSession {
	f.t.Helper()
	if secret == "" {
		return f.connectWith("")
	}
	return f.connectWith("Bearer " + secret)
}

// connectWith opens a session that sends authorization as the Authorization header (none
// when empty).
func (f *forum) connectWith(authorization string) *mcp.ClientSession {
	f.t.Helper()
	client := mcp.NewClient(&mcp.Implementation{Name: "parley-test", Version: "1"}, nil)
	transport := &mcp.StreamableClientTransport{Endpoint: f.url, HTTPClient: &http.Client{Transport: authorizing(authorization)}}
	cs, err := client.Connect(context.Background(), transport, nil)
	if err != nil {
		f.t.Fatalf("connect: %v", err)
	}
	f.t.Cleanup(func() { cs.Close() })
	return cs
}

// authorizing is an http.RoundTripper that adds the Authorization header.
type authorizing string

func (a authorizing) RoundTrip(r *http.Request) (*http.Response, error) {
	if a != "" {
		r = r.Clone(r.Context())
		r.Header.Set("Authorization", string(a))
	}
	return http.DefaultTransport.RoundTrip(r)
}

// call calls a tool; args is JSON as text, so that tests send exactly those bytes, and ""
// sends no arguments at all.
func call(t *testing.T, cs *mcp.ClientSession, name, args string) *mcp.CallToolResult {
	t.Helper()
	params := &mcp.CallToolParams{Name: name}
	if args != "" {
		params.Arguments = json.RawMessage(args)
	}
	res, err := cs.CallTool(context.Background(), params)
	if err != nil {
		t.Fatalf("%s %s: %v", name, args, err)
	}
	return res
}

// ok calls a tool that must succeed and decodes its structured result into out, checking
// that the text content carries the same JSON.
func ok(t *testing.T, cs *mcp.ClientSession, name, args string, out any) {
	t.Helper()
	res := call(t, cs, name, args)
	if res.IsError {
		t.Fatalf("%s %s: refused: %s", name, args, text(t, res))
	}
	sc, err := json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	if !jsonEqual(t, sc, []byte(text(t, res))) {
		t.Fatalf("%s: text content %s differs from structuredContent %s", name, text(t, res), sc)
	}
	if out != nil {
		if err := json.Unmarshal(sc, out); err != nil {
			t.Fatalf("%s: decoding %s: %v", name, sc, err)
		}
	}
}

// refusal is what a refused call carries.
type refusal struct {
	Reason     string `json:"reason"`
	Message    string `json:"message"`
	Status     int    `json:"status"`
	RetryAfter int    `json:"retry_after"`
}

// refused calls a tool that must be refused, checks the shape of § 9 (isError, the refusal
// object as structuredContent, "<reason>: <message>" as text) and returns the refusal.
func refused(t *testing.T, cs *mcp.ClientSession, name, args string) refusal {
	t.Helper()
	res := call(t, cs, name, args)
	return refusalOf(t, name+" "+args, res)
}

func refusalOf(t *testing.T, what string, res *mcp.CallToolResult) refusal {
	t.Helper()
	if !res.IsError {
		t.Fatalf("%s: accepted, want a refusal", what)
	}
	sc, err := json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	var r refusal
	dec := json.NewDecoder(bytes.NewReader(sc))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&r); err != nil {
		t.Fatalf("%s: structuredContent %s is not a refusal object: %v", what, sc, err)
	}
	if r.Reason == "" || r.Message == "" || r.Status != protocol.Reason(r.Reason).Status() {
		t.Fatalf("%s: refusal %s lacks reason, message or the status of its reason", what, sc)
	}
	if got, want := text(t, res), r.Reason+": "+r.Message; got != want {
		t.Fatalf("%s: text %q, want %q", what, got, want)
	}
	return r
}

func text(t *testing.T, res *mcp.CallToolResult) string {
	t.Helper()
	if len(res.Content) != 1 {
		t.Fatalf("want one content item, got %d", len(res.Content))
	}
	tc, isText := res.Content[0].(*mcp.TextContent)
	if !isText {
		t.Fatalf("content is %T, want text", res.Content[0])
	}
	return tc.Text
}

func jsonEqual(t *testing.T, a, b []byte) bool {
	t.Helper()
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	ja, _ := json.Marshal(x)
	jb, _ := json.Marshal(y)
	return bytes.Equal(ja, jb)
}

// post sends one raw JSON-RPC message and returns the HTTP response and its body: for what
// a client library would not send.
func post(t *testing.T, url, secret, body string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if secret != "" {
		req.Header.Set("Authorization", "Bearer "+secret)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, data
}

// logBuffer collects what the server logs.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}
