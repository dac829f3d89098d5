package web_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/parleyforum/parley/protocol"
	"github.com/parleyforum/parley/storage"
	"github.com/parleyforum/parley/storage/storagetest"
)

// The official MCP Inspector talks to Parley: its command line (@modelcontextprotocol/
// inspector-cli, pinned in package-lock.json and installed by npm ci with the assets), run by
// node against the forum over Streamable HTTP with an agent's token, lists every tool, reads
// the manifest and sends an ask that the database then holds. The Inspector sends
// logging/setLevel first, because initialize advertises logging: found refused (-32601) once,
// which made every call of it fail. Without node or the package the test fails, never skips:
// make test installs both (docs/testing.md).

// inspectorPackage is the Inspector's command line as npm installs it from the root
// package-lock.json; build/cli.js is its package's bin (mcp-inspector-cli).
const inspectorPackage = "node_modules/@modelcontextprotocol/inspector-cli"

// inspect runs the Inspector in CLI mode against the forum's /mcp with token and decodes the
// JSON it prints.
func (f *forum) inspect(t *testing.T, token string, args ...string) map[string]any {
	t.Helper()
	node := tool(t, "node")
	want := lockedVersion(t, filepath.Join("..", "package-lock.json"), inspectorPackage)
	raw, err := os.ReadFile(filepath.Join("..", inspectorPackage, "package.json"))
	var installed struct{ Version string }
	if err != nil || json.Unmarshal(raw, &installed) != nil || installed.Version != want {
		t.Fatalf("the MCP Inspector's CLI %s is not installed (found %q, %v): make assets, or npm ci, installs it", want, installed.Version, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	argv := append([]string{filepath.Join("..", inspectorPackage, "build", "cli.js"), "--cli", f.base + "/mcp", "--transport", "http"}, args...)
	argv = append(argv, "--header", "Authorization: Bearer "+token)
	cmd := exec.CommandContext(ctx, node, argv...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("the MCP Inspector %v: %v\nstdout: %s\nstderr: %s", args, err, stdout.Bytes(), stderr.Bytes())
	}
	var out map[string]any
	if err := json.Unmarshal(stdout.Bytes(), &out); err != nil {
		t.Fatalf("the MCP Inspector %v printed no JSON object: %v\nstdout: %s\nstderr: %s", args, err, stdout.Bytes(), stderr.Bytes())
	}
	return out
}

// The three calls run at once, each a node process of its own: the test takes about as long
// as one of them (a second or two).
func TestOfficialMCPInspector(t *testing.T) {
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		f := newForum(t, db, protocol.DefaultLimits())

		t.Run("tools/list", func(t *testing.T) {
			t.Parallel()
			listed := f.inspect(t, f.alice, "--method", "tools/list")
			tools, _ := listed["tools"].([]any)
			var names []string
			for _, tool := range tools {
				name, _ := tool.(map[string]any)["name"].(string)
				names = append(names, name)
			}
			served, err := f.mcpAs("Bearer "+f.alice).ListTools(context.Background(), &mcp.ListToolsParams{})
			if err != nil {
				t.Fatal(err)
			}
			var want []string
			for _, tool := range served.Tools {
				want = append(want, tool.Name)
			}
			slices.Sort(names)
			slices.Sort(want)
			if len(want) == 0 || !slices.Equal(names, want) {
				t.Errorf("the Inspector lists the tools %v, want every tool served: %v", names, want)
			}
		})

		t.Run("get_manifest", func(t *testing.T) {
			t.Parallel()
			manifest := f.inspect(t, f.alice, "--method", "tools/call", "--tool-name", "get_manifest")
			content, _ := manifest["structuredContent"].(map[string]any)
			if manifest["isError"] == true || content["parley"] != "1" || content["limits"] == nil {
				t.Errorf("get_manifest through the Inspector: %v", manifest)
			}
		})

		t.Run("send", func(t *testing.T) {
			t.Parallel()
			const body = "Which port does the Inspector reach Parley on?"
			sent := f.inspect(t, f.alice, "--method", "tools/call", "--tool-name", "send", "--tool-arg", "kind=ask", "body="+body)
			if sent["isError"] == true {
				t.Fatalf("send through the Inspector: %v", sent)
			}
			var identity, kind string
			if err := db.NewRaw("SELECT identity, kind FROM messages WHERE body = ?", body).Scan(context.Background(), &identity, &kind); err != nil {
				t.Fatalf("the ask sent through the Inspector is not in the database: %v (it answered %v)", err, sent)
			}
			if identity != "ainotes:alice" || kind != "ask" {
				t.Errorf("the ask sent through the Inspector is stored as %s by %s", kind, identity)
			}
		})
	})
}
