package mcpserver_test

import (
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/parleyforum/parley/protocol"
	"github.com/parleyforum/parley/protocol/mcpserver"
	"github.com/parleyforum/parley/storage"
	"github.com/parleyforum/parley/storage/storagetest"
)

// rpcError is a JSON-RPC error response as it comes over the wire, id kept raw.
type rpcError struct {
	ID    json.RawMessage `json:"id"`
	Error *struct {
		Code    int64  `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// Faults of JSON-RPC itself are answered as JSON-RPC error objects in the caller's terms:
// never plain text, never a Go type's name, never an id other than the one sent; and a batch
// is refused whatever protocol version the client names.
func TestFaultsOfJSONRPCAreJSONRPCErrors(t *testing.T) {
	f := newForum(t, storagetest.Open(t, storage.SQLite), protocol.Limits{})
	for _, c := range []struct {
		name, body, version string
		status              int
		code                int64
		id                  string // the id the answer must carry
		says                string // in the message
	}{
		{"unparsable", `{"jsonrpc":"2.0","id":1,"method":`, "", 400, -32700, "null", "not valid JSON"},
		{"a batch", `[{"jsonrpc":"2.0","id":1,"method":"tools/list"}]`, "", 400, -32600, "null", "batch"},
		{"a batch under 2025-03-26", `[{"jsonrpc":"2.0","id":1,"method":"tools/list"},{"jsonrpc":"2.0","id":2,"method":"ping"}]`, "2025-03-26", 400, -32600, "null", "batch"},
		{"an empty batch", `[]`, "", 400, -32600, "null", "batch"},
		{"a string", `"ping"`, "", 400, -32600, "null", "object"},
		{"no jsonrpc", `{"id":1,"method":"ping"}`, "", 400, -32600, "null", "jsonrpc"},
		{"a method that is a number", `{"jsonrpc":"2.0","id":1,"method":7}`, "", 400, -32600, "1", "method"},
		{"an unknown method", `{"jsonrpc":"2.0","id":1,"method":"nope"}`, "", 200, -32601, "1", `"nope"`},
		{"a method of no served capability", `{"jsonrpc":"2.0","id":"p","method":"prompts/list"}`, "", 200, -32601, `"p"`, "prompts/list"},
		{"an id beyond 64 bits", `{"jsonrpc":"2.0","id":12345678901234567890,"method":"ping"}`, "", 400, -32600, "null", "id"},
		{"an id beyond 2^53", `{"jsonrpc":"2.0","id":9007199254740993,"method":"ping"}`, "", 400, -32600, "null", "id"},
		{"a fractional id", `{"jsonrpc":"2.0","id":1.5,"method":"ping"}`, "", 400, -32600, "null", "id"},
		{"an id with an exponent", `{"jsonrpc":"2.0","id":1e3,"method":"ping"}`, "", 400, -32600, "null", "id"},
		{"an object id", `{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}`, "", 400, -32600, "null", "id"},
		{"params a number", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":5}`, "", 200, -32602, "1", "params must be an object"},
		{"a tool name that is a number", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":5}}`, "", 200, -32602, "1", "params.name must be a JSON string"},
		{"tools/call without params", `{"jsonrpc":"2.0","id":1,"method":"tools/call"}`, "", 200, -32602, "1", "params"},
		{"a protocol version that is a number", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":5}}`, "", 200, -32602, "1", "params.protocolVersion"},
		{"a capability of the wrong type", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{"roots":5},"clientInfo":{"name":"x","version":"1"}}}`,
			"", 200, -32602, "1", "params.capabilities.roots must be a JSON object, not a JSON number"},
		{"a cursor that is a number", `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"cursor":5}}`, "", 200, -32602, "1", "params.cursor"},
	} {
		t.Run(c.name, func(t *testing.T) {
			req, _ := http.NewRequest(http.MethodPost, f.url, strings.NewReader(c.body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			if c.version != "" {
				req.Header.Set("MCP-Protocol-Version", c.version)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			var got rpcError
			if err := json.NewDecoder(resp.Body).Decode(&got); err != nil || got.Error == nil {
				t.Fatalf("the answer is no JSON-RPC error (%v): %d %s", err, resp.StatusCode, resp.Header.Get("Content-Type"))
			}
			if resp.StatusCode != c.status || got.Error.Code != c.code || string(got.ID) != c.id || !strings.Contains(got.Error.Message, c.says) {
				t.Errorf("%d id %s %d %q, want %d id %s %d saying %q", resp.StatusCode, got.ID, got.Error.Code, got.Error.Message,
					c.status, c.id, c.code, c.says)
			}
			if strings.Contains(got.Error.Message, "mcp.") || strings.Contains(got.Error.Message, "Go ") {
				t.Errorf("the message names a Go type: %q", got.Error.Message)
			}
		})
	}
	// A notification is answered by nothing, one the server does not take included.
	for _, method := range []string{"notifications/initialized", "notifications/nope", "nope"} {
		resp, data := post(t, f.url, "", `{"jsonrpc":"2.0","method":"`+method+`"}`)
		if resp.StatusCode != http.StatusAccepted || len(data) != 0 {
			t.Errorf("notification %s: %d %q, want 202 and nothing", method, resp.StatusCode, data)
		}
	}
	// The ids that can be echoed come back exactly.
	for _, id := range []string{`9007199254740991`, `-9007199254740991`, `"12345678901234567890"`, `0`} {
		resp, data := post(t, f.url, "", `{"jsonrpc":"2.0","id":`+id+`,"method":"ping"}`)
		var got rpcError
		if err := json.Unmarshal(data, &got); err != nil || resp.StatusCode != 200 || string(got.ID) != id || got.Error != nil {
			t.Errorf("ping with id %s: %d %s", id, resp.StatusCode, data)
		}
	}
}

// One answer is bounded: a result over MaxAnswerBytes is not sent but answered as a
// JSON-RPC internal error, and logged.
func TestAnAnswerIsBounded(t *testing.T) {
	f := newForum(t, storagetest.Open(t, storage.SQLite), protocol.Limits{})
	srv := httptest.NewServer(mcpserver.New(f.svc, mcpserver.Options{MaxAnswerBytes: 4096, Logger: slog.New(slog.NewTextHandler(f.log, nil))}))
	t.Cleanup(srv.Close)
	secret := f.token("alice", "read,write", false)
	resp, data := post(t, srv.URL, secret, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"read_thread","arguments":{"thread":"th_1"}}}`)
	_ = resp
	var small rpcError
	if json.Unmarshal(data, &small) != nil || small.Error != nil {
		t.Fatalf("a small answer: %s", data)
	}
	_, data = post(t, srv.URL, secret, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"get_manifest","arguments":{}}}`)
	var big rpcError
	if err := json.Unmarshal(data, &big); err != nil || big.Error == nil || big.Error.Code != -32603 || len(data) > 4096 {
		t.Fatalf("an answer over the bound: %.300s", data)
	}
	if !strings.Contains(f.log.String(), "more than the 4096") {
		t.Errorf("the fault is not logged: %s", f.log.String())
	}
}
