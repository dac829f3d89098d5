package web_test

import (
	"context"
	"encoding/json"
	"io"
	"maps"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/parleyforum/parley/protocol"
	"github.com/parleyforum/parley/storage"
	"github.com/parleyforum/parley/storage/storagetest"
)

// MCP through the app as parley serve builds it, with the Go SDK's own client.
func TestMCPThroughTheApp(t *testing.T) {
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		f := newForum(t, db, protocol.Limits{})
		alice, bob := f.mcp(f.alice), f.mcp(f.bob)

		asked := toolOK(t, alice, "send", `{"kind":"ask","body":"Does MCP pass through Fiber?"}`)
		th := asked["thread"].(map[string]any)["id"].(string)
		toolOK(t, bob, "send", `{"kind":"answer","thread":"`+th+`","body":"It does."}`)
		read := toolOK(t, alice, "read_thread", `{"thread":"`+th+`"}`)
		if state := read["thread"].(map[string]any)["state"]; state != "answered" {
			t.Errorf("after the answer the thread is %v", state)
		}
		// What HTTP says of the same thread, MCP says too.
		if http := f.must(f.get("/v1/threads/"+th, f.alice), http.StatusOK); !sameJSON(withoutReadTime(http.json), withoutReadTime(read)) {
			t.Errorf("read over HTTP %s differs from over MCP %v", http.body, read)
		}
		res, err := bob.CallTool(context.Background(), &mcp.CallToolParams{Name: "send",
			Arguments: json.RawMessage(`{"kind":"note","thread":"` + th + `","parent":"` + read["messages"].([]any)[0].(map[string]any)["replies"].([]any)[0].(map[string]any)["id"].(string) + `","body":"me again"}`)})
		if err != nil || !res.IsError || res.StructuredContent.(map[string]any)["reason"] != "self_reply" {
			t.Errorf("bob's note on his own answer: %+v %v", res, err)
		}
	})
}

// The SDK refuses a foreign Host on a loopback listener (DNS rebinding), which needs the
// listener's address in the request's context, through Fiber as under net/http.
func TestMCPRefusesAForeignHost(t *testing.T) {
	f := newForum(t, storagetest.Open(t, storage.SQLite), protocol.Limits{})
	u, err := url.Parse(f.base)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		host   string
		status int
	}{
		{"evil.example", http.StatusForbidden},
		{"evil.example:" + u.Port(), http.StatusForbidden},
		{u.Host, http.StatusOK},
		{"localhost:" + u.Port(), http.StatusOK},
	} {
		req, err := http.NewRequest(http.MethodPost, f.base+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
		if err != nil {
			t.Fatal(err)
		}
		req.Host = c.host
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != c.status {
			t.Errorf("Host %s: %d %.200s, want %d", c.host, resp.StatusCode, body, c.status)
		}
	}
}

// mcp opens a session of the Go SDK's client on the app's /mcp, with secret as bearer token
// (none when empty).
func (f *forum) mcp(secret string) *mcp.ClientSession {
	f.t.Helper()
	if secret == "" {
		return f.mcpAs("")
	}
	return f.mcpAs("Bearer " + secret)
}

// mcpAs opens a session that sends authorization as its Authorization header (none when
// empty), as an MCP client configured with that header does.
func (f *forum) mcpAs(authorization string) *mcp.ClientSession {
	f.t.Helper()
	client := mcp.NewClient(&mcp.Implementation{Name: "parley-web-test", Version: "1"}, nil)
	transport := &mcp.StreamableClientTransport{Endpoint: f.base + "/mcp", HTTPClient: &http.Client{Transport: authorizing(authorization)}}
	cs, err := client.Connect(context.Background(), transport, nil)
	if err != nil {
		f.t.Fatalf("connecting to /mcp: %v", err)
	}
	f.t.Cleanup(func() { cs.Close() })
	return cs
}

// authorizing adds an Authorization header to every request.
type authorizing string

func (a authorizing) RoundTrip(r *http.Request) (*http.Response, error) {
	if a != "" {
		r = r.Clone(r.Context())
		r.Header.Set("Authorization", string(a))
	}
	return http.DefaultTransport.RoundTrip(r)
}

// toolOK calls a tool that must succeed and returns its structuredContent.
func toolOK(t *testing.T, cs *mcp.ClientSession, name, args string) map[string]any {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: json.RawMessage(args)})
	if err != nil {
		t.Fatalf("%s %s: %v", name, args, err)
	}
	out, _ := res.StructuredContent.(map[string]any)
	if res.IsError || out == nil {
		t.Fatalf("%s %s: %+v", name, args, res)
	}
	return out
}

// sameJSON compares two decoded JSON values.
// withoutReadTime is a read's answer without the time of its point (as_of.at): two reads of
// a record nothing was written to say the same point, its last event and stance, at two
// moments.
func withoutReadTime(answer map[string]any) map[string]any {
	out := maps.Clone(answer)
	if point, ok := out["as_of"].(map[string]any); ok {
		point = maps.Clone(point)
		delete(point, "at")
		out["as_of"] = point
	}
	return out
}

func sameJSON(a, b any) bool {
	ja, errA := json.Marshal(a)
	jb, errB := json.Marshal(b)
	return errA == nil && errB == nil && string(ja) == string(jb)
}
