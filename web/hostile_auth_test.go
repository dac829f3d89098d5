package web_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/parleyforum/parley/protocol"
	"github.com/parleyforum/parley/storage"
	"github.com/parleyforum/parley/storage/storagetest"
)

// postMCP sends one raw JSON-RPC body to /mcp with the given headers (each value of a key
// is sent as a header line of its own) and reads the answer.
func (f *forum) postMCP(body string, header http.Header) *reply {
	f.t.Helper()
	hr, err := http.NewRequest(http.MethodPost, f.base+"/mcp", strings.NewReader(body))
	if err != nil {
		f.t.Fatal(err)
	}
	hr.Header.Set("Content-Type", "application/json")
	hr.Header.Set("Accept", "application/json, text/event-stream")
	for k, values := range header {
		for _, v := range values {
			hr.Header.Add(k, v)
		}
	}
	resp, err := http.DefaultClient.Do(hr)
	if err != nil {
		f.t.Fatal(err)
	}
	return readReply(f.t, resp)
}

// toolCall is a JSON-RPC tools/call of name with args.
func toolCall(name, args string) string {
	return `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"` + name + `","arguments":` + args + `}}`
}

// refusalOfTool reads the refusal object of a tool result with isError, nil for anything else.
func refusalOfTool(r *reply) map[string]any {
	res, _ := r.json["result"].(map[string]any)
	if isErr, _ := res["isError"].(bool); !isErr {
		return nil
	}
	sc, _ := res["structuredContent"].(map[string]any)
	return sc
}

// Two Authorization headers naming two identities are one request with two senders: both
// transports refuse it as unauthenticated, whichever header a reader would take.
func TestTwoAuthorizationHeadersAreUnauthenticated(t *testing.T) {
	f := newForum(t, storagetest.Open(t, storage.SQLite), protocol.Limits{})
	two := http.Header{"Authorization": {"Bearer " + f.alice, "Bearer " + f.bob}}

	hr, err := http.NewRequest(http.MethodGet, f.base+"/v1/manifest", nil)
	if err != nil {
		t.Fatal(err)
	}
	hr.Header = two.Clone()
	resp, err := http.DefaultClient.Do(hr)
	if err != nil {
		t.Fatal(err)
	}
	if got := readReply(t, resp); got.status != http.StatusUnauthorized || got.reason() != "unauthenticated" {
		t.Errorf("HTTP with two Authorization headers: %d %s, want 401 unauthenticated", got.status, got.body)
	}

	got := f.postMCP(toolCall("get_manifest", `{}`), two)
	if r := refusalOfTool(got); r == nil || r["reason"] != "unauthenticated" {
		t.Errorf("MCP with two Authorization headers: %d %.200s, want an unauthenticated result", got.status, got.body)
	}
}

// Failed authentications are limited per client address on both transports, which share one
// count: after failed_auths_per_minute failures, the next request is rate_limited with
// retry_after (and Retry-After over HTTP), a good token included.
func TestFailedAuthenticationsAreLimited(t *testing.T) {
	limits := protocol.DefaultLimits()
	limits.FailedAuthsPerMinute = 4
	f := newForum(t, storagetest.Open(t, storage.SQLite), limits)
	bad := http.Header{"Authorization": {"Bearer parley_guess"}}
	for range 2 {
		f.must(f.get("/v1/threads", "parley_guess"), http.StatusUnauthorized)
		if r := refusalOfTool(f.postMCP(toolCall("list_threads", `{}`), bad)); r == nil || r["reason"] != "unauthenticated" {
			t.Fatalf("a guess over MCP: %v", r)
		}
	}
	limited := f.must(f.get("/v1/threads", f.alice), http.StatusTooManyRequests)
	if limited.reason() != "rate_limited" || limited.header.Get("Retry-After") == "" || limited.json["retry_after"] == nil {
		t.Errorf("after 4 failures over HTTP: %s %v", limited.body, limited.header)
	}
	r := refusalOfTool(f.postMCP(toolCall("list_threads", `{}`), http.Header{"Authorization": {"Bearer " + f.alice}}))
	if r == nil || r["reason"] != "rate_limited" || r["retry_after"] == nil {
		t.Errorf("after 4 failures over MCP: %v", r)
	}
	// The manifest without a token still answers: nothing is authenticated.
	var m map[string]any
	if err := json.Unmarshal(f.must(f.get("/v1/manifest", ""), http.StatusOK).body, &m); err != nil {
		t.Fatal(err)
	}
}
