package graph

import (
	"bytes"
	"encoding/json"
	"testing"
)

// The AIF export as AIFdb reads it: only the node types of AIF, every edge between nodes that
// exist, every scheme node (RA, CA, MA, YA) between a premise and a conclusion, claims as
// I-nodes, and each L-node a locution of a participant.
func TestAIF(t *testing.T) {
	g := sampleGraph()
	var buf bytes.Buffer
	if err := WriteAIF(&buf, g); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Nodes        []struct{ NodeID, Text, Type, Timestamp string }
		Edges        []struct{ EdgeID, FromID, ToID string }
		Locutions    []struct{ NodeID, PersonID string }
		Participants []struct{ ParticipantID, Firstname string }
	}
	if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatalf("the AIF is not JSON: %v", err)
	}
	types := map[string]string{}
	count := map[string]int{}
	for _, n := range doc.Nodes {
		switch n.Type {
		case "I", "RA", "CA", "MA", "L", "YA":
		default:
			t.Errorf("node %s has type %q, not an AIF type", n.NodeID, n.Type)
		}
		if _, twice := types[n.NodeID]; twice {
			t.Errorf("node id %s is used twice", n.NodeID)
		}
		types[n.NodeID] = n.Type
		count[n.Type]++
	}
	in, out := map[string]int{}, map[string]int{}
	for _, e := range doc.Edges {
		if types[e.FromID] == "" || types[e.ToID] == "" {
			t.Errorf("edge %s joins %s and %s, which are not both nodes", e.EdgeID, e.FromID, e.ToID)
		}
		out[e.FromID]++
		in[e.ToID]++
	}
	for id, typ := range types {
		if typ != "I" && typ != "L" && (in[id] == 0 || out[id] == 0) {
			t.Errorf("scheme node %s (%s) has %d premises and %d conclusions", id, typ, in[id], out[id])
		}
	}
	for _, n := range g.Nodes {
		if n.Type == TypeClaim && types[n.ID] != "I" {
			t.Errorf("claim %s is %q, want an I-node", n.ID, types[n.ID])
		}
	}
	// The sample: one attestation and one verification (RA), one refutation (CA), one
	// supersession (MA), three claims each asserted in a locution (L, YA).
	want := map[string]int{"I": 3 + 3, "RA": 2, "CA": 1, "MA": 1, "L": 3, "YA": 3}
	for typ, n := range want {
		if count[typ] != n {
			t.Errorf("%d %s-nodes, want %d", count[typ], typ, n)
		}
	}
	people := map[string]bool{}
	for _, p := range doc.Participants {
		people[p.ParticipantID] = true
	}
	for _, l := range doc.Locutions {
		if types[l.NodeID] != "L" || !people[l.PersonID] {
			t.Errorf("locution %s of %s is not an L-node of a participant", l.NodeID, l.PersonID)
		}
	}
}
