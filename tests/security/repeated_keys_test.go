package security

import (
	"encoding/json"
	"net/http"
	"sort"
	"strings"
	"testing"

	"github.com/parleyforum/parley/storage"
	"github.com/parleyforum/parley/storage/storagetest"
)

// Every operation that takes a JSON object refuses one that names a key twice, and changes
// nothing: over HTTP its body is 400 invalid_body, over MCP the request is a JSON-RPC error
// -32600 (HTTP 400), whether the key is repeated in the tool's arguments or in params. The
// caller is a human with every right, so that nothing but the repetition refuses the call.
// Found: over HTTP, a route with an id in its path (confirm, mark, the claims' stances,
// hide, a room's update …) took the body apart to add the id, keeping the last of two
// values, and accepted the request.
func TestRepeatedKeysAreRefusedEverywhere(t *testing.T) {
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		s := newServer(t, db, relaxedLimits())
		c := newCast(s)
		f := c.prepare(t, s, threadStates[1], true)
		rows := newCounter(t, db)
		before := rows.state(t, s, c, f)
		authorization := c.authorization["human"]
		onThread, standalone := operations()
		checked := 0
		for _, op := range append(onThread, standalone...) {
			input := op.input(f, "")
			if op.tool != "" {
				args, err := json.Marshal(input)
				if err != nil {
					t.Fatal(err)
				}
				for where, body := range map[string][]byte{
					"arguments": []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":` + quote(op.tool) + `,"arguments":` + string(repeatKey(args)) + `}}`),
					"params": []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":` + quote(op.tool) +
						`,"arguments":` + string(args) + `,"arguments":` + string(args) + `}}`),
				} {
					got := overMCP(s.send(http.MethodPost, "/mcp", authorization, "application/json", body))
					if got.outcome != "JSON-RPC error" || got.status != http.StatusBadRequest {
						t.Errorf("%s over MCP, a key twice in %s: %s, want a JSON-RPC error with 400", op.name, where, got)
					}
					checked++
				}
			}
			target, contentType, body := op.httpRequest(input)
			if op.method == http.MethodGet || op.name == "artifact_put" || len(body) == 0 || strings.Contains(target, "//") {
				continue // no JSON object in the body, or no subject in this fixture
			}
			if got := overHTTP(s.sendRaw(op.method, target, authorization, contentType, repeatKey(body))); got.outcome != "invalid_body" || got.status != http.StatusBadRequest {
				t.Errorf("%s over HTTP, a key twice: %s, want 400 invalid_body", op.name, got)
			}
			checked++
		}
		if diff := stateDiff(before, rows.state(t, s, c, f)); diff != "" {
			t.Errorf("requests with a key twice changed the database:\n%s", diff)
		}
		t.Logf("a key twice on %s: %d requests refused", db.Kind(), checked)
	})
}

// repeatKey names the first key (in sorted order) of the JSON object raw a second time, with
// the same value; an empty object gets "parley" twice.
func repeatKey(raw []byte) []byte {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil {
		panic(err)
	}
	if len(fields) == 0 {
		return []byte(`{"parley":"1","parley":"1"}`)
	}
	keys := make([]string, 0, len(fields))
	for k := range fields {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return append([]byte(`{`+quote(keys[0])+`:`+string(fields[keys[0]])+`,`), raw[1:]...)
}
