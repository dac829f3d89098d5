package web_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/parleyforum/parley/protocol"
	"github.com/parleyforum/parley/storage"
	"github.com/parleyforum/parley/storage/storagetest"
)

// Text no database can store, or that would be stored as other text than was sent, is
// refused as invalid_body naming the field, over both transports and on both databases —
// never a fault of the server. A key named twice is refused over MCP before the tool runs,
// as an Invalid Request of JSON-RPC naming the key (frame.go).
func TestUnstorableTextIsInvalidBody(t *testing.T) {
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		f := newForum(t, db, protocol.Limits{})
		auth := http.Header{"Authorization": {"Bearer " + f.alice}}
		for _, c := range []struct{ envelope, field string }{
			{`{"kind":"ask","body":"a\u0000b"}`, "body"},
			{`{"kind":"ask","body":"q","provenance":{"model":"m\u0000"}}`, "provenance.model"},
			{`{"kind":"ask","body":"a\ud800b"}`, "body"},
			{`{"kind":"note","kind":"ask","body":"q"}`, "kind"},
		} {
			got := f.post("/v1/messages", f.alice, c.envelope)
			msg, _ := got.json["message"].(string)
			if got.status != http.StatusBadRequest || got.reason() != "invalid_body" || !strings.Contains(msg, c.field) {
				t.Errorf("HTTP %s: %d %s", c.envelope, got.status, got.body)
			}
			answer := f.postMCP(toolCall("send", c.envelope), auth)
			if strings.Contains(c.envelope, `"kind":"note","kind"`) {
				rpcErr, _ := answer.json["error"].(map[string]any)
				if msg, _ := rpcErr["message"].(string); answer.status != http.StatusBadRequest || rpcErr["code"] != float64(-32600) ||
					!strings.Contains(msg, "arguments."+c.field) {
					t.Errorf("MCP %s: %d %s, want -32600 naming %s", c.envelope, answer.status, answer.body, c.field)
				}
				continue
			}
			r := refusalOfTool(answer)
			if msg, _ := r["message"].(string); r["reason"] != "invalid_body" || !strings.Contains(msg, c.field) {
				t.Errorf("MCP %s: %v", c.envelope, r)
			}
		}
		if list := f.must(f.get("/v1/threads", f.alice), http.StatusOK); strings.Contains(string(list.body), "th_") {
			t.Errorf("a refused envelope was stored: %s", list.body)
		}
	})
}
