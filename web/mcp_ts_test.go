package web_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/parleyforum/parley/protocol"
	"github.com/parleyforum/parley/storage"
	"github.com/parleyforum/parley/storage/storagetest"
)

// tsClient is the folder of the TypeScript client check, its SDK pinned in package-lock.json.
const tsClient = "../clients/ts"

// An independent client, the official TypeScript SDK's, holds a first conversation over the
// app's /mcp: initialize, tools/list, get_manifest, ask, an answer from a second token,
// read_thread, and refusals checked for isError and structuredContent. Without node, or
// without the npm registry to install the SDK from, the test fails: it never skips.
func TestMCPWithTheTypeScriptClient(t *testing.T) {
	node := tool(t, "node")
	installTSClient(t)
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		f := newForum(t, db, protocol.Limits{})
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, node, "conversation.mjs")
		cmd.Dir = tsClient
		cmd.Env = append(os.Environ(), "PARLEY_MCP_URL="+f.base+"/mcp", "PARLEY_TOKEN_A="+f.alice, "PARLEY_TOKEN_B="+f.bob)
		out, err := cmd.CombinedOutput()
		t.Logf("node conversation.mjs:\n%s", out)
		if err != nil {
			t.Fatalf("the TypeScript client's conversation failed: %v", err)
		}
	})
}

// tool finds a program the test needs, or fails.
func tool(t *testing.T, name string) string {
	t.Helper()
	path, err := exec.LookPath(name)
	if err != nil {
		t.Fatalf("%s is needed for this test (Node.js 20 or later, with npm): %v", name, err)
	}
	return path
}

// installTSClient runs npm ci when node_modules does not hold the SDK version that
// package-lock.json pins.
func installTSClient(t *testing.T) {
	t.Helper()
	const sdk = "node_modules/@modelcontextprotocol/sdk"
	want := lockedVersion(t, filepath.Join(tsClient, "package-lock.json"), sdk)
	if installed, err := os.ReadFile(filepath.Join(tsClient, sdk, "package.json")); err == nil {
		var p struct{ Version string }
		if json.Unmarshal(installed, &p) == nil && p.Version == want {
			return
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, tool(t, "npm"), "ci", "--ignore-scripts", "--no-audit", "--no-fund")
	cmd.Dir = tsClient
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("npm ci in %s (it needs the npm registry) failed: %v\n%s", tsClient, err, out)
	}
}

// lockedVersion reads the version package-lock.json pins for an installed package path.
func lockedVersion(t *testing.T, lockFile, pkg string) string {
	t.Helper()
	raw, err := os.ReadFile(lockFile)
	if err != nil {
		t.Fatal(err)
	}
	var lock struct {
		Packages map[string]struct{ Version string } `json:"packages"`
	}
	if err := json.Unmarshal(raw, &lock); err != nil {
		t.Fatalf("%s: %v", lockFile, err)
	}
	v := lock.Packages[pkg].Version
	if v == "" {
		t.Fatalf("%s pins no %s", lockFile, pkg)
	}
	return v
}
