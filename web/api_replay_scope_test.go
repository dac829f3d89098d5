package web_test

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/parleyforum/parley/protocol"
	"github.com/parleyforum/parley/storage"
	"github.com/parleyforum/parley/storage/storagetest"
)

// § 19 "Replays keep their scope", over HTTP and MCP: a read token of alice's scoped to room
// alpha that resends alice's keyed ask in room beta is refused as a new request would be —
// not answered 201 Idempotent-Replayed with beta's thread — and a token of alice's that could
// send it now gets the first answer.
func TestReplayKeepsItsScopeOverHTTPAndMCP(t *testing.T) {
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		f := newForum(t, db, protocol.Limits{})
		ctx := context.Background()
		for _, name := range []string{"alpha", "beta"} { // rm_2, rm_3
			if err := db.Write(ctx, func(ctx context.Context, w *storage.Forum) error {
				return w.CreateRoom(ctx, &storage.Room{Name: name, Title: name})
			}); err != nil {
				t.Fatal(err)
			}
		}
		token := func(rights, rooms string) string {
			secret, err := protocol.NewTokenSecret()
			if err != nil {
				t.Fatal(err)
			}
			if _, err := db.CreateToken(ctx, storage.NewToken{Identity: "ainotes:alice", SecretHash: protocol.HashTokenSecret(secret),
				Rights: rights, Rooms: rooms}); err != nil {
				t.Fatal(err)
			}
			return secret
		}
		readInAlpha, writeInBeta := token("read", "2"), token("read,write", "3")
		ask := `{"kind":"ask","body":"What does beta hold?","room":"beta"}`
		keyed := func(secret string) *reply {
			return f.do(request{method: http.MethodPost, target: "/v1/messages", token: secret, body: ask,
				header: map[string]string{"Idempotency-Key": "ask-beta"}})
		}
		first := f.must(keyed(f.alice), http.StatusCreated)

		if r := keyed(readInAlpha); r.status != http.StatusForbidden || r.reason() != string(protocol.ReasonTokenRightMissing) ||
			r.header.Get("Idempotent-Replayed") != "" {
			t.Errorf("alice's read token in alpha resends: %d %v %s, want 403 token_right_missing", r.status, r.header.Get("Idempotent-Replayed"), r.body)
		}
		if r := f.must(keyed(writeInBeta), http.StatusCreated); r.header.Get("Idempotent-Replayed") != "true" || r.at("thread", "id") != first.at("thread", "id") {
			t.Errorf("alice's write token in beta resends: %s %s, want the first answer", r.header.Get("Idempotent-Replayed"), r.body)
		}

		args := json.RawMessage(`{"kind":"ask","body":"What does beta hold?","room":"beta","idempotency_key":"ask-beta"}`)
		res, err := f.mcp(readInAlpha).CallTool(ctx, &mcp.CallToolParams{Name: "send", Arguments: args})
		if err != nil {
			t.Fatal(err)
		}
		if out, _ := res.StructuredContent.(map[string]any); !res.IsError || out["reason"] != string(protocol.ReasonTokenRightMissing) {
			t.Errorf("MCP: alice's read token in alpha resends: %+v, want token_right_missing", res.StructuredContent)
		}
		threads := f.must(f.get("/v1/threads?room=beta", f.reader), http.StatusOK)
		if n := len(threads.json["threads"].([]any)); n != 1 {
			t.Errorf("room beta has %d threads after the resends, want 1", n)
		}
	})
}
