package mcpserver_test

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/parleyforum/parley/protocol"
	"github.com/parleyforum/parley/protocol/mcpserver"
	"github.com/parleyforum/parley/storage"
	"github.com/parleyforum/parley/storage/storagetest"
)

// A fault of the server is a JSON-RPC internal error that tells the client nothing of its
// cause, and the cause is logged.
func TestServerFaultIsAJSONRPCInternalError(t *testing.T) {
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		f := newForum(t, db, protocol.Limits{})
		alice := f.connect(f.token("alice", "read,write", false))
		var asked sendOut
		ok(t, alice, "send", `{"kind":"ask","body":"Where did the events go?"}`, &asked)
		// A schema that is not what the code expects: a fault, not a refusal.
		if _, err := db.ExecContext(context.Background(), "ALTER TABLE events RENAME TO events_elsewhere"); err != nil {
			t.Fatal(err)
		}
		_, err := alice.CallTool(context.Background(), &mcp.CallToolParams{Name: "read_events",
			Arguments: map[string]any{"thread": asked.Thread.ID}})
		var rpcErr *jsonrpc.Error
		if !errors.As(err, &rpcErr) || rpcErr.Code != jsonrpc.CodeInternalError {
			t.Fatalf("read_events on a broken schema: %v, want a JSON-RPC internal error", err)
		}
		if strings.Contains(rpcErr.Message, "events") {
			t.Errorf("the error %q leaks its cause", rpcErr.Message)
		}
		if log := f.log.String(); !strings.Contains(log, "read_events") || !strings.Contains(log, "events") {
			t.Errorf("the fault is not logged with its cause: %q", log)
		}
	})
}

// When the database cannot be reached, a tool answers unavailable (503) as a refusal — the
// client should retry — and what needs no database still works.
func TestUnreachableDatabaseIsUnavailable(t *testing.T) {
	ctx := context.Background()
	db, p := storagetest.OpenProxied(t, storage.Options{})
	f := newForum(t, db, protocol.Limits{})
	secret := f.token("alice", "read,write", false)
	alice, anon := f.connect(secret), f.connect("")
	var m manifestOut
	ok(t, alice, "get_manifest", `{}`, &m)
	if m.You == nil {
		t.Fatal("with the database up, the manifest names alice")
	}

	p.Cut()

	for _, c := range []struct{ tool, args string }{
		{"send", `{"kind":"ask","body":"anyone?"}`},
		{"inbox", `{}`},
		{"get_manifest", `{}`}, // a token that is sent is checked, and cannot be
	} {
		if r := refused(t, alice, c.tool, c.args); r.Reason != "unavailable" || r.Status != 503 {
			t.Errorf("%s with the database down: %+v", c.tool, r)
		}
	}
	ok(t, anon, "get_manifest", `{}`, &m)
	if _, err := anon.ListTools(ctx, nil); err != nil {
		t.Errorf("tools/list needs no database: %v", err)
	}
}

// A long poll ends when its request does: the SDK hands tool handlers a context without the
// request's cancellation (and answers a request that has gone while its handler runs on),
// and the handler puts the cancellation back.
func TestLongPollEndsWithItsRequest(t *testing.T) {
	limits := protocol.DefaultLimits()
	limits.InboxMaxWaitSeconds = 3600 // without the request's end, this test would wait an hour
	f := newForum(t, storagetest.Open(t, storage.SQLite), limits)
	secret := f.token("alice", "read,write", false)
	h := mcpserver.New(f.svc, mcpserver.Options{Logger: slog.New(slog.NewTextHandler(f.log, nil))})
	started, finished := make(chan struct{}), make(chan struct{})
	mcpserver.WatchCalls(h, func() { close(started) }, func() { close(finished) })

	ctx, cancel := context.WithCancel(context.Background())
	req := httptest.NewRequestWithContext(ctx, http.MethodPost, "/mcp", strings.NewReader(
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"inbox","arguments":{"wait_seconds":3600}}}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+secret)
	go h.ServeHTTP(httptest.NewRecorder(), req)
	<-started
	cancel() // the client goes away
	<-finished
}
