package graph

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// graphmlReader is the folder of the GraphML check: graphology-graphml, pinned in its
// package-lock.json, reads the export as any GraphML tool would.
const graphmlReader = "../clients/graphml"

// The GraphML export is read by a real GraphML parser: every node and edge, every attribute
// with the type its <key> declares. Without node and npm the test fails; it never skips.
func TestGraphMLIsReadByAGraphMLParser(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatalf("node is needed for this test (Node.js 20 or later, with npm): %v", err)
	}
	installGraphMLReader(t)
	g := sampleGraph()
	var doc bytes.Buffer
	if err := WriteGraphML(&doc, g); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "read.mjs")
	cmd.Dir = graphmlReader
	cmd.Stdin = bytes.NewReader(doc.Bytes())
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("graphology-graphml cannot read the export: %v\n%s\n%s", err, stderr.String(), doc.String())
	}
	var read struct {
		Type  string
		Nodes []struct {
			Key        string
			Attributes map[string]any
		}
		Edges []struct {
			Source, Target string
			Attributes     map[string]any
		}
	}
	if err := json.Unmarshal(out, &read); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if read.Type != "directed" || len(read.Nodes) != len(g.Nodes) || len(read.Edges) != len(g.Edges) {
		t.Fatalf("read a %s graph of %d nodes and %d edges, want directed, %d and %d", read.Type, len(read.Nodes), len(read.Edges), len(g.Nodes), len(g.Edges))
	}
	for i, want := range g.Nodes {
		got := read.Nodes[i]
		evidence, _ := json.Marshal(want.Evidence)
		checks := map[string]any{"type": want.Type, "thread": want.Thread, "time": want.At.Format(time.RFC3339Nano)}
		if want.Type == TypeClaim {
			checks["statement"], checks["state"], checks["certainty"] = want.Statement, want.State, want.Certainty
			checks["expired"], checks["grounded"], checks["identity"] = *want.Expired, string(want.Grounded), want.AssertedBy
			checks["evidence"] = string(evidence)
		} else {
			checks["identity"] = want.By
		}
		if want.Text != "" {
			checks["text"] = want.Text
		}
		for name, value := range checks {
			if got.Attributes[name] != value {
				t.Errorf("node %s: %s = %#v, want %#v", want.ID, name, got.Attributes[name], value)
			}
		}
		if got.Key != want.ID {
			t.Errorf("node %d is %s, want %s", i, got.Key, want.ID)
		}
	}
	for i, want := range g.Edges {
		got := read.Edges[i]
		if got.Source != want.From || got.Target != want.To || got.Attributes["kind"] != want.Kind {
			t.Errorf("edge %d: %s -%v-> %s, want %s -%s-> %s", i, got.Source, got.Attributes["kind"], got.Target, want.From, want.Kind, want.To)
		}
	}
}

// installGraphMLReader runs npm ci when node_modules does not hold the parser version that
// package-lock.json pins.
func installGraphMLReader(t *testing.T) {
	t.Helper()
	const pkg = "node_modules/graphology-graphml"
	var lock struct {
		Packages map[string]struct{ Version string }
	}
	raw, err := os.ReadFile(filepath.Join(graphmlReader, "package-lock.json"))
	if err != nil || json.Unmarshal(raw, &lock) != nil {
		t.Fatalf("cannot read %s/package-lock.json: %v", graphmlReader, err)
	}
	want := lock.Packages[pkg].Version
	var installed struct{ Version string }
	if raw, err := os.ReadFile(filepath.Join(graphmlReader, pkg, "package.json")); err == nil && json.Unmarshal(raw, &installed) == nil && installed.Version == want {
		return
	}
	npm, err := exec.LookPath("npm")
	if err != nil {
		t.Fatalf("npm is needed to install the GraphML parser: %v", err)
	}
	cmd := exec.Command(npm, "ci", "--ignore-scripts", "--no-audit", "--no-fund")
	cmd.Dir = graphmlReader
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("npm ci in %s: %v\n%s", graphmlReader, err, out)
	}
}
