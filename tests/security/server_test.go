package security

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/parleyforum/parley/protocol"
	"github.com/parleyforum/parley/storage"
	"github.com/parleyforum/parley/web"
)

// server is one Parley app, as parley serve builds it, over one database, serving HTTP and
// MCP on a listener of its own. Cases of the suite share it; each prepares the threads it
// needs.
type server struct {
	t    testing.TB
	db   *storage.DB
	base string // http://127.0.0.1:port
	svc  *protocol.Service
	// secrets are every token secret made for this server, for the scan of refusals.
	secrets []string
}

// relaxedLimits are the reference limits with the write rate and the failed authentications
// lifted: the matrix writes far more than 120 times a minute as one identity, and sends
// hundreds of bad tokens from one address. auth_test.go checks the limit itself.
func relaxedLimits() protocol.Limits {
	l := protocol.DefaultLimits()
	l.WritesPerMinute = 1 << 30
	l.FailedAuthsPerMinute = 1 << 30
	return l
}

func newServer(t testing.TB, db *storage.DB, limits protocol.Limits) *server {
	t.Helper()
	app := web.New(web.Options{DB: db, Limits: limits, Version: "test",
		Logger:      slog.New(slog.NewTextHandler(io.Discard, nil)),
		TrustRealms: map[string]string{trustedRealm: trustedRealmKey.DID()}})
	s := &server{t: t, db: db, base: serve(t, app),
		svc: protocol.New(db, protocol.Options{Limits: limits, Version: "test"})}
	return s
}

// serve runs app until the test ends and returns its address.
func serve(t testing.TB, app *fiber.App) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- app.Listener(web.Listener(ln)) }()
	t.Cleanup(func() {
		// Go's client may hold a spare connection it dialled but never sent a request on;
		// fasthttp counts it as open, not idle, and would wait for it forever. Closing the
		// client's idle connections ends it; the timeout bounds what another client keeps.
		client.CloseIdleConnections()
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

// token stores a token as parley token create does (for a human: --human, every right) and
// returns its secret and the caller it stands for.
func (s *server) token(identity string, human bool, rights string) (string, *protocol.Actor) {
	return s.scopedToken(identity, human, rights, "")
}

// scopedToken is token for a token scoped to the rooms named (comma-separated; "" for every
// room), as parley token create --rooms makes it.
func (s *server) scopedToken(identity string, human bool, rights, rooms string) (string, *protocol.Actor) {
	s.t.Helper()
	if rooms != "" {
		var err error
		if rooms, err = s.svc.ResolveTokenRooms(context.Background(), strings.Split(rooms, ",")); err != nil {
			s.t.Fatal(err)
		}
	}
	secret, err := protocol.NewTokenSecret()
	if err != nil {
		s.t.Fatal(err)
	}
	tok, err := s.db.CreateToken(context.Background(), storage.NewToken{
		Identity: identity, Human: human, SecretHash: protocol.HashTokenSecret(secret), Rights: rights, Rooms: rooms,
	})
	if err != nil {
		s.t.Fatal(err)
	}
	s.secrets = append(s.secrets, secret)
	return secret, protocol.ActorOfToken(tok)
}

// revokedToken is a token revoked before it was ever used, as parley token revoke does.
func (s *server) revokedToken(identity string) string {
	s.t.Helper()
	secret, _ := s.token(identity, false, "read,write")
	tok, err := s.db.TokenByHash(context.Background(), protocol.HashTokenSecret(secret))
	if err != nil {
		s.t.Fatal(err)
	}
	if err := s.db.RevokeToken(context.Background(), tok.ID); err != nil {
		s.t.Fatal(err)
	}
	return secret
}

// answer is what one transport answered to one call: "ok" or the refusal's reason, the
// status (HTTP's, or over MCP the refusal's own), the result object, and the raw body.
type answer struct {
	outcome string
	status  int
	result  map[string]any
	raw     []byte
}

func (a answer) String() string {
	return a.outcome + ": " + clip(strings.TrimSpace(string(a.raw)), 300)
}

func clip(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}

var client = &http.Client{Timeout: 60 * time.Second}

// send makes one HTTP request; authorization is the whole header value ("" for none).
func (s *server) send(method, target, authorization, contentType string, body []byte) (*http.Response, []byte) {
	s.t.Helper()
	var r io.Reader = http.NoBody
	if body != nil {
		r = bytes.NewReader(body)
	}
	req, err := http.NewRequest(method, s.base+target, r)
	if err != nil {
		s.t.Fatal(err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	if authorization != "" {
		req.Header.Set("Authorization", authorization)
	}
	if strings.HasPrefix(target, "/mcp") {
		req.Header.Set("Accept", "application/json, text/event-stream")
	}
	resp, err := client.Do(req)
	if err != nil {
		s.t.Fatalf("%s %s: %v", method, target, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		s.t.Fatal(err)
	}
	return resp, raw
}

// overHTTP reads an answer of /v1: a refusal of § 9 is {reason, message, status}.
func overHTTP(resp *http.Response, raw []byte) answer {
	a := answer{status: resp.StatusCode, raw: raw}
	var obj map[string]any
	isJSON := strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json")
	if isJSON {
		_ = json.Unmarshal(raw, &obj)
	}
	if resp.StatusCode >= 400 {
		a.outcome, _ = obj["reason"].(string)
		if a.outcome == "" {
			a.outcome = "no reason"
		}
		return a
	}
	a.outcome, a.result = "ok", obj
	return a
}

// callTool sends one tools/call to /mcp as a stateless client does.
func (s *server) callTool(authorization, tool string, args []byte) answer {
	s.t.Helper()
	body := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":` + quote(tool) + `,"arguments":`)
	body = append(append(body, args...), "}}"...)
	resp, raw := s.send(http.MethodPost, "/mcp", authorization, "application/json", body)
	return overMCP(resp, raw)
}

// overMCP reads a tools/call answer: a refusal is a result with isError and the refusal as
// structuredContent; a fault of JSON-RPC is an error object.
func overMCP(resp *http.Response, raw []byte) answer {
	a := answer{status: resp.StatusCode, raw: raw}
	var rpc struct {
		Result *struct {
			IsError           bool           `json:"isError"`
			StructuredContent map[string]any `json:"structuredContent"`
		} `json:"result"`
		Error *struct {
			Code int `json:"code"`
		} `json:"error"`
	}
	if err := json.Unmarshal(raw, &rpc); err != nil || (rpc.Result == nil && rpc.Error == nil) {
		a.outcome = "no JSON-RPC answer"
		return a
	}
	if rpc.Error != nil {
		a.outcome = "JSON-RPC error"
		return a
	}
	if rpc.Result.IsError {
		a.outcome, _ = rpc.Result.StructuredContent["reason"].(string)
		if st, ok := rpc.Result.StructuredContent["status"].(float64); ok {
			a.status = int(st)
		}
		if a.outcome == "" {
			a.outcome = "no reason"
		}
		return a
	}
	a.outcome, a.result = "ok", rpc.Result.StructuredContent
	return a
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// at reads a string at a path of keys: at(m, "thread", "id").
func at(m map[string]any, keys ...string) string {
	var v any = m
	for _, k := range keys {
		o, _ := v.(map[string]any)
		v = o[k]
	}
	s, _ := v.(string)
	return s
}
