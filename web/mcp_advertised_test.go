package web_test

import (
	"net/http"
	"testing"

	"github.com/parleyforum/parley/protocol"
	"github.com/parleyforum/parley/storage"
	"github.com/parleyforum/parley/storage/storagetest"
)

// MCP serves exactly what initialize advertises: logging (logging/setLevel is accepted, and
// changes nothing), and tools whose list never changes (listChanged false). Found: logging
// was advertised and logging/setLevel refused with -32601, so the official Inspector, which
// sends it first, could not connect.
func TestMCPServesWhatItAdvertises(t *testing.T) {
	f := newForum(t, storagetest.Open(t, storage.SQLite), protocol.Limits{})
	init := f.postMCP(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`, nil)
	res, _ := init.json["result"].(map[string]any)
	caps, _ := res["capabilities"].(map[string]any)
	tools, _ := caps["tools"].(map[string]any)
	if _, logging := caps["logging"]; !logging || tools == nil || tools["listChanged"] == true {
		t.Fatalf("initialize advertises %v", caps)
	}
	for _, level := range []string{"debug", "warning", "emergency"} {
		got := f.postMCP(`{"jsonrpc":"2.0","id":2,"method":"logging/setLevel","params":{"level":"`+level+`"}}`, nil)
		if got.status != http.StatusOK || got.json["error"] != nil || got.json["result"] == nil {
			t.Errorf("logging/setLevel %s: %d %s", level, got.status, got.body)
		}
	}
}
