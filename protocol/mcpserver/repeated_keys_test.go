package mcpserver_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/parleyforum/parley/protocol"
	"github.com/parleyforum/parley/storage"
	"github.com/parleyforum/parley/storage/storagetest"
)

// A JSON-RPC request that names a key twice in one object — in the envelope, in params or
// at any depth of a tool's arguments — is -32600 (Invalid Request) and writes nothing. Found:
// the last of two was taken ("method" twice; two "arguments", and the second's body was
// stored), and a write with an idempotency key re-encoded its arguments, keeping one of two
// bodies that the operation never saw.
func TestRepeatedKeysAreInvalidRequests(t *testing.T) {
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		f := newForum(t, db, protocol.Limits{})
		secret := f.token("alice", "read,write", false)
		const ask = `{"kind":"ask","body":"first"}`
		for _, c := range []struct {
			name, body string
			id         string // the id the answer carries
			path       string // the key named in the message
		}{
			{"method twice", `{"jsonrpc":"2.0","id":1,"method":"ping","method":"tools/call","params":{"name":"send","arguments":` + ask + `}}`, "1", "method"},
			{"id twice", `{"jsonrpc":"2.0","id":1,"id":2,"method":"tools/call","params":{"name":"send","arguments":` + ask + `}}`, "null", "id"},
			{"params twice", `{"jsonrpc":"2.0","id":"p","method":"tools/call","params":{"name":"get_manifest"},"params":{"name":"send","arguments":` + ask + `}}`, `"p"`, "params"},
			{"arguments twice", `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"send","arguments":` + ask + `,"arguments":{"kind":"ask","body":"second"}}}`, "3", "params.arguments"},
			{"name twice", `{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"get_manifest","name":"send","arguments":` + ask + `}}`, "4", "params.name"},
			{"body twice", `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"send","arguments":{"kind":"ask","body":"first","body":"second"}}}`, "5", "params.arguments.body"},
			{"body twice, once escaped", `{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"send","arguments":{"kind":"ask","body":"first","b\u006fdy":"second"}}}`, "6", "params.arguments.body"},
			{"body twice beside an idempotency key", `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"send","arguments":{"kind":"ask","body":"first","body":"second","idempotency_key":"k-7"}}}`, "7", "params.arguments.body"},
			{"extension twice in from", `{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"send","arguments":{"kind":"ask","body":"first","from":{"extension":"a","extension":"b"}}}}`, "8", "params.arguments.from.extension"},
			{"deep inside a field the server ignores", `{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"send","arguments":{"kind":"ask","body":"first","id":{"x":[{"y":1,"y":2}]}}}}`, "9", "params.arguments.id.x[0].y"},
			{"in _meta", `{"jsonrpc":"2.0","id":10,"method":"tools/call","params":{"name":"send","arguments":` + ask + `,"_meta":{"progressToken":1,"progressToken":2}}}`, "10", "params._meta.progressToken"},
			{"a notification", `{"jsonrpc":"2.0","method":"notifications/initialized","method":"tools/call"}`, "null", "method"},
		} {
			t.Run(c.name, func(t *testing.T) {
				resp, data := post(t, f.url, secret, c.body)
				var got rpcError
				if err := json.Unmarshal(data, &got); err != nil || got.Error == nil {
					t.Fatalf("%d %s, want a JSON-RPC error", resp.StatusCode, data)
				}
				if resp.StatusCode != http.StatusBadRequest || got.Error.Code != -32600 || string(got.ID) != c.id ||
					!strings.Contains(got.Error.Message, "key "+c.path+" appears more than once") {
					t.Errorf("%d id %s %d %q, want 400 id %s -32600 naming %s", resp.StatusCode, got.ID, got.Error.Code, got.Error.Message, c.id, c.path)
				}
			})
		}
		// A key that differs only in case is another key, for this server as for the SDK:
		// "Method" is no method, and this request is a ping. (encoding/json matched it to
		// method, so the server ran the tool while the SDK would have pinged.)
		resp, data := post(t, f.url, secret, `{"jsonrpc":"2.0","id":12,"method":"ping","Method":"tools/call","params":{"name":"send","arguments":`+ask+`}}`)
		if resp.StatusCode != http.StatusOK || string(data) != `{"jsonrpc":"2.0","id":12,"result":{}}` {
			t.Errorf("a ping with a Method member: %d %s, want the ping's answer", resp.StatusCode, data)
		}
		if n := messageCount(t, db); n != 0 {
			t.Fatalf("%d messages stored by refused requests", n)
		}
		// Each key once, the same call is a write: what was refused was the repetition.
		resp, data = post(t, f.url, secret, `{"jsonrpc":"2.0","id":11,"method":"tools/call","params":{"name":"send","arguments":{"kind":"ask","body":"first","idempotency_key":"k-11"}}}`)
		if resp.StatusCode != http.StatusOK || strings.Contains(string(data), `"isError":true`) || messageCount(t, db) != 1 {
			t.Fatalf("the same send without a repeated key: %d %s", resp.StatusCode, data)
		}
	})
}

func messageCount(t *testing.T, db *storage.DB) int64 {
	t.Helper()
	n, err := db.NewSelect().Table("messages").Count(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return n
}
