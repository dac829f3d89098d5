package mcpserver_test

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"testing"

	"github.com/parleyforum/parley/protocol"
	"github.com/parleyforum/parley/storage"
	"github.com/parleyforum/parley/storage/storagetest"
)

// toolNames are § 10's tools of the core and of the dialectic, artifacts and signed
// profiles, plus mark (§ 5) and search (§ 13), in the order tools/list gives.
var toolNames = []string{"artifact_get", "artifact_put", "claim_assert", "claim_attest", "claim_graph", "claim_read", "claim_refute", "claim_verify", "confirm", "get_manifest", "inbox", "key_register", "list_rooms", "list_threads", "mark", "message_hide", "message_unhide", "read_events", "read_thread", "search", "send", "thread_move"}

// maxToolsListBytes keeps the tools a client carries in every turn of its context at about
// 3,000 tokens: the details are in the manifest, read once.
const maxToolsListBytes = 12000

// The real tools/list response, as bytes on the wire, without a token and without a session.
func TestToolsListIsSmall(t *testing.T) {
	f := newForum(t, storagetest.Open(t, storage.SQLite), protocol.Limits{})
	resp, body := post(t, f.url, "", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("tools/list: %d %s", resp.StatusCode, body)
	}
	t.Logf("tools/list response: %d bytes (limit %d)", len(body), maxToolsListBytes)
	if len(body) > maxToolsListBytes {
		t.Errorf("tools/list is %d bytes, over %d", len(body), maxToolsListBytes)
	}
	var rpc struct {
		Result struct {
			Tools []struct {
				Name         string         `json:"name"`
				Description  string         `json:"description"`
				InputSchema  map[string]any `json:"inputSchema"`
				OutputSchema map[string]any `json:"outputSchema"`
			} `json:"tools"`
		} `json:"result"`
	}
	if err := json.Unmarshal(body, &rpc); err != nil {
		t.Fatalf("%v: %s", err, body)
	}
	var names []string
	for _, tool := range rpc.Result.Tools {
		names = append(names, tool.Name)
		if len(tool.Description) < 40 {
			t.Errorf("%s: description %q says too little", tool.Name, tool.Description)
		}
		closed(t, tool.Name, tool.InputSchema)
		// No output schema: clients validate a refused call's structuredContent against one
		// too, and one that only said "an object" cost every client's context its bytes.
		if tool.OutputSchema != nil {
			t.Errorf("%s: output schema %v announced", tool.Name, tool.OutputSchema)
		}
	}
	if !slices.Equal(names, toolNames) {
		t.Errorf("tools %v, want %v", names, toolNames)
	}
}

// closed checks that an object schema, and every object schema inside it, forbids other
// properties (§ 10).
func closed(t *testing.T, where string, s map[string]any) {
	t.Helper()
	if s["type"] != "object" {
		return
	}
	if s["additionalProperties"] != false {
		t.Errorf("%s: additionalProperties is %v, want false", where, s["additionalProperties"])
	}
	props, _ := s["properties"].(map[string]any)
	for name, p := range props {
		if inner, isMap := p.(map[string]any); isMap {
			closed(t, where+"."+name, inner)
		}
	}
}

// The schemas name the same kinds and states as the rules, and send's required fields are
// the envelope's.
func TestSchemasFollowTheRules(t *testing.T) {
	f := newForum(t, storagetest.Open(t, storage.SQLite), protocol.Limits{})
	tools, err := f.connect("").ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	schemas := map[string]map[string]any{}
	for _, tool := range tools.Tools {
		b, _ := json.Marshal(tool.InputSchema)
		var s map[string]any
		if err := json.Unmarshal(b, &s); err != nil {
			t.Fatal(err)
		}
		schemas[tool.Name] = s
	}
	enumOf := func(tool, field string) []string {
		prop := schemas[tool]["properties"].(map[string]any)[field].(map[string]any)
		var out []string
		for _, v := range prop["enum"].([]any) {
			out = append(out, v.(string))
		}
		return out
	}
	var kinds, states []string
	for _, k := range protocol.Kinds {
		kinds = append(kinds, string(k.Kind))
	}
	for _, s := range protocol.AllStates() {
		states = append(states, string(s))
	}
	if got := enumOf("send", "kind"); !slices.Equal(got, kinds) {
		t.Errorf("send.kind enum %v, want %v", got, kinds)
	}
	for _, tool := range []string{"mark", "list_threads"} {
		if got := enumOf(tool, "state"); !slices.Equal(got, states) {
			t.Errorf("%s.state enum %v, want %v", tool, got, states)
		}
	}
	required := map[string][]string{
		"get_manifest": nil, "send": {"kind", "body"}, "read_thread": {"thread"}, "list_threads": nil,
		"read_events": {"thread"}, "inbox": nil, "confirm": {"thread"}, "mark": {"thread", "state"},
	}
	for tool, want := range required {
		var got []string
		if r, has := schemas[tool]["required"].([]any); has {
			for _, v := range r {
				got = append(got, v.(string))
			}
		}
		if !slices.Equal(got, want) {
			t.Errorf("%s: required %v, want %v", tool, got, want)
		}
	}
}
