package mcpserver_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/parleyforum/parley/protocol"
	"github.com/parleyforum/parley/storage"
	"github.com/parleyforum/parley/storage/storagetest"
)

// What happens before and around the operations: the size check, authentication (a token
// that is sent must be valid, for get_manifest too), and where JSON-RPC errors end and
// refusals begin. The
// refusals of the operations themselves are compared with HTTP's in web's parity test.
func TestRefusalsAroundTheOperations(t *testing.T) {
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		f := newForum(t, db, protocol.Limits{})
		sessions := map[string]*mcp.ClientSession{
			"none":    f.connect(""),
			"alice":   f.connect(f.token("alice", "read,write", false)),
			"reader":  f.connect(f.token("reader", "read", false)),
			"unknown": f.connect("parley_made-up"),
			"basic":   f.connectWith("Basic YWxpY2U6c2VjcmV0"),
			"empty":   f.connectWith("Bearer "),
		}
		big := `{"kind":"ask","body":"` + strings.Repeat("x", protocol.DefaultLimits().RequestMaxBytes) + `"}`
		for _, c := range []struct {
			name, who, tool, args string
			reason                protocol.Reason
			names                 string // what the message must mention
		}{
			{"an unknown argument", "alice", "send", `{"kind":"ask","body":"b","colour":"red"}`, protocol.ReasonInvalidBody, "colour"},
			{"an unknown field inside from", "alice", "send", `{"kind":"ask","body":"b","from":{"extension":"w","x":1}}`, protocol.ReasonInvalidBody, "from.x"},
			{"a missing required field", "alice", "send", `{"body":"b"}`, protocol.ReasonInvalidBody, "kind"},
			{"a wrong type", "alice", "inbox", `{"limit":"many"}`, protocol.ReasonInvalidBody, "limit"},
			{"arguments that are not an object", "alice", "read_thread", `[1]`, protocol.ReasonInvalidBody, "object"},
			{"no arguments where one is required", "alice", "read_thread", ``, protocol.ReasonInvalidBody, "thread"},
			{"an argument to get_manifest", "none", "get_manifest", `{"verbose":true}`, protocol.ReasonInvalidBody, "verbose"},
			{"no token", "none", "send", `{"kind":"ask","body":"b"}`, protocol.ReasonUnauthenticated, "Bearer"},
			{"no token, bad arguments", "none", "send", `{"colour":"red"}`, protocol.ReasonUnauthenticated, ""},
			{"no token, reading", "none", "inbox", `{}`, protocol.ReasonUnauthenticated, ""},
			{"an unknown token", "unknown", "read_thread", `{"thread":"th_1"}`, protocol.ReasonUnauthenticated, ""},
			{"a Basic header", "basic", "list_threads", `{}`, protocol.ReasonUnauthenticated, "Bearer"},
			{"an empty bearer", "empty", "list_threads", `{}`, protocol.ReasonUnauthenticated, ""},
			{"the manifest with an unknown token", "unknown", "get_manifest", `{}`, protocol.ReasonUnauthenticated, "unknown"},
			{"the manifest with a Basic header", "basic", "get_manifest", ``, protocol.ReasonUnauthenticated, "Bearer"},
			{"a token without write", "reader", "send", `{"kind":"ask","body":"b"}`, protocol.ReasonTokenRightMissing, "write"},
			{"an agent marking", "alice", "mark", `{"thread":"th_1","state":"open"}`, protocol.ReasonTokenRightMissing, "human"},
			{"an unknown thread", "alice", "read_thread", `{"thread":"th_999999"}`, protocol.ReasonNotFound, "th_999999"},
			{"arguments over request_max_bytes", "alice", "send", big, protocol.ReasonPayloadTooLarge, "request_max_bytes"},
			{"size before authentication", "none", "send", big, protocol.ReasonPayloadTooLarge, ""},
		} {
			t.Run(c.name, func(t *testing.T) {
				r := refused(t, sessions[c.who], c.tool, c.args)
				if r.Reason != string(c.reason) || !strings.Contains(r.Message, c.names) {
					t.Errorf("%s %s: %s %q, want %s naming %q", c.tool, c.args, r.Reason, r.Message, c.reason, c.names)
				}
			})
		}

		t.Run("an unknown tool is a JSON-RPC error", func(t *testing.T) {
			_, err := sessions["alice"].CallTool(context.Background(), &mcp.CallToolParams{Name: "claim_everything"})
			var rpcErr *jsonrpc.Error
			if !errors.As(err, &rpcErr) || rpcErr.Code != jsonrpc.CodeInvalidParams {
				t.Errorf("unknown tool: %v, want a JSON-RPC invalid params error", err)
			}
		})

		t.Run("a body no operation could take is refused unread", func(t *testing.T) {
			l := protocol.DefaultLimits()
			huge := strings.Repeat("x", 2*max(l.RequestMaxBytes, l.ArtifactMaxBytes))
			resp, body := post(t, f.url, "", `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"send","arguments":{"kind":"ask","body":"`+huge+`"}}}`)
			var rpc struct {
				ID    any `json:"id"`
				Error struct {
					Code    int     `json:"code"`
					Message string  `json:"message"`
					Data    refusal `json:"data"`
				} `json:"error"`
			}
			if err := json.Unmarshal(body, &rpc); err != nil {
				t.Fatalf("%d %s: %v", resp.StatusCode, body, err)
			}
			if resp.StatusCode != http.StatusRequestEntityTooLarge || rpc.ID != nil || rpc.Error.Code != jsonrpc.CodeInvalidRequest ||
				rpc.Error.Data.Reason != "payload_too_large" || rpc.Error.Data.Status != 413 ||
				rpc.Error.Message != "payload_too_large: "+rpc.Error.Data.Message {
				t.Errorf("over the most the server reads: %d %s", resp.StatusCode, body)
			}
		})
	})
}

// rate_limited carries retry_after in structuredContent, as over HTTP.
func TestRateLimitedCarriesRetryAfter(t *testing.T) {
	limits := protocol.DefaultLimits()
	limits.WritesPerMinute = 1
	f := newForum(t, storagetest.Open(t, storage.SQLite), limits)
	alice := f.connect(f.token("alice", "read,write", false))
	ok(t, alice, "send", `{"kind":"ask","body":"first"}`, nil)
	r := refused(t, alice, "send", `{"kind":"ask","body":"second"}`)
	if r.Reason != "rate_limited" || r.Status != 429 || r.RetryAfter < 1 {
		t.Errorf("second write in a minute: %+v", r)
	}
}
