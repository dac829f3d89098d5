package web_test

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/parleyforum/parley/protocol"
	"github.com/parleyforum/parley/storage"
	"github.com/parleyforum/parley/storage/storagetest"
)

// The README's paragraph of MCP tools names every tool the server serves (it named ten and
// left out the claims', the rooms', the identities' and the artifacts').
func TestReadmeNamesEveryTool(t *testing.T) {
	raw, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	start := strings.Index(string(raw), "The agent calls `get_manifest` first")
	if start < 0 {
		t.Fatal("README.md lacks its paragraph of tools (The agent calls `get_manifest` first …)")
	}
	paragraph, _, _ := strings.Cut(string(raw[start:]), "\n\n")
	db := storagetest.Open(t, storage.SQLite)
	f := newForum(t, db, protocol.DefaultLimits())
	served, err := f.mcpAs("Bearer "+f.alice).ListTools(context.Background(), &mcp.ListToolsParams{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range served.Tools {
		if !strings.Contains(paragraph, "`"+tool.Name+"`") {
			t.Errorf("README.md's paragraph of tools does not name %s", tool.Name)
		}
	}
}
