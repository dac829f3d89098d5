package protocol_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/parleyforum/parley/graph"
	"github.com/parleyforum/parley/protocol"
	"github.com/parleyforum/parley/storage"
	"github.com/parleyforum/parley/storage/storagetest"
)

// read_thread and claim_graph in pages (read_page.go), with pages of a few kilobytes: the
// messages come first, in order of creation, a reply whose parent came on an earlier page
// as a root; then the claims, one larger than a page cut between its stances and continued;
// walking the cursors gives what one read of the whole thread gives, each once, and the
// graph's pages the whole graph's nodes, edges and grounded labels.
func TestReadThreadAndGraphInPages(t *testing.T) {
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		// Pages of 3,000 bytes, so that a few messages and claims span several.
		l := generous()
		svc := protocol.New(db, protocol.Options{Limits: l, ReadPageBytes: 3000})
		whole := protocol.New(db, protocol.Options{Limits: l})
		ctx := context.Background()
		alice, bob := agent("alice", "read,write"), agent("bob", "read,write")
		opened := send(t, svc, alice, envelope("ask", "", "Which limits hold?"))
		th := opened.Thread.ID
		for i := range 12 {
			send(t, svc, bob, envelope("answer", th, fmt.Sprintf("Answer %d: a page of a few kilobytes holds only some of these.", i), "parent", opened.Message.ID))
		}
		var claims []string
		for i := range 4 {
			claims = append(claims, mustClaim(t, svc, alice, "assert", `{"thread":"`+th+`","statement":"claim `+fmt.Sprint(i)+`","evidence":`+proof+`}`).ID)
		}
		for i := range 12 { // claim 0: more stances than one page holds
			mustClaim(t, svc, agent(fmt.Sprintf("w%d", i), "read,write"), "attest", `{"claim":"`+claims[0]+`","evidence":`+proof+`,"note":"seen it pass on run `+fmt.Sprint(i)+`"}`)
		}
		mustClaim(t, svc, bob, "refute", `{"claim":"`+claims[2]+`","evidence":`+proof+`,"body":"it fails on arm64"}`)
		read := readThread(t, whole, th)
		wholeGraph, err := whole.ClaimGraph(ctx, protocol.ScopeOf(reader), mustID(t, th))
		if err != nil {
			t.Fatal(err)
		}

		seen := map[string]int{}
		var cursor *string
		pages, continued := 0, 0
		for {
			req := map[string]any{"thread": th}
			if cursor != nil {
				req["cursor"] = *cursor
			}
			page, err := svc.ReadThread(ctx, reader, []byte(jsonOf(req)))
			if err != nil {
				t.Fatal(err)
			}
			pages++
			for _, m := range flatten(page.Messages) {
				seen[m.ID]++
				if m.Parent != nil && seen[*m.Parent] == 0 {
					t.Errorf("message %s comes before its parent %s", m.ID, *m.Parent)
				}
			}
			for _, c := range page.Claims {
				if !c.Continued {
					seen[c.ID]++
				} else {
					continued++
				}
				for _, st := range append(append(c.Attestations, c.Refutations...), c.Verifications...) {
					seen[st.ID]++
				}
			}
			if cursor = page.NextCursor; cursor == nil {
				break
			}
		}
		want := map[string]bool{}
		for _, m := range flatten(read.Messages) {
			want[m.ID] = true
		}
		for _, c := range read.Claims {
			want[c.ID] = true
			for _, st := range append(append(c.Attestations, c.Refutations...), c.Verifications...) {
				want[st.ID] = true
			}
		}
		if pages < 4 || continued == 0 {
			t.Errorf("read_thread: %d pages, %d claims continued; want several, and claim 0 cut", pages, continued)
		}
		for id := range want {
			if seen[id] != 1 {
				t.Errorf("read_thread pages give %s %d times", id, seen[id])
			}
		}
		if len(seen) != len(want) {
			t.Errorf("read_thread pages give %d items, one read %d", len(seen), len(want))
		}

		nodes, edges := map[string]*graph.Node{}, map[graph.Edge]int{}
		cursor, pages = nil, 0
		for {
			req := map[string]any{"thread": th}
			if cursor != nil {
				req["cursor"] = *cursor
			}
			page, err := svc.Graph(ctx, reader, []byte(jsonOf(req)))
			if err != nil {
				t.Fatal(err)
			}
			pages++
			for _, n := range page.Graph.Nodes {
				if nodes[n.ID] != nil {
					t.Errorf("graph node %s given twice", n.ID)
				}
				nodes[n.ID] = n
			}
			for _, e := range page.Graph.Edges {
				edges[*e]++
			}
			if cursor = page.NextCursor; cursor == nil {
				break
			}
		}
		if pages < 2 || len(nodes) != len(wholeGraph.Nodes) || len(edges) != len(wholeGraph.Edges) {
			t.Errorf("claim_graph: %d pages, %d nodes and %d edges; read whole %d and %d", pages, len(nodes), len(edges), len(wholeGraph.Nodes), len(wholeGraph.Edges))
		}
		for _, n := range wholeGraph.Nodes {
			if got := nodes[n.ID]; got == nil || got.Grounded != n.Grounded {
				t.Errorf("graph node %s: paged %+v, whole grounded %q", n.ID, got, n.Grounded)
			}
		}
		labels, err := svc.GroundedLabelsOf(ctx, reader, th)
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range wholeGraph.Nodes {
			if n.Type == graph.TypeClaim && labels[n.ID] != string(n.Grounded) {
				t.Errorf("GroundedLabelsOf: %s is %q, the whole graph says %q", n.ID, labels[n.ID], n.Grounded)
			}
		}
		for _, e := range wholeGraph.Edges {
			if edges[*e] != 1 {
				t.Errorf("graph edge %+v given %d times", *e, edges[*e])
			}
		}
		if _, err := svc.Graph(ctx, reader, []byte(`{"thread":"`+th+`","format":"graphml"}`)); err == nil {
			t.Error("a graphml document larger than a page was given")
		} else {
			wantRefused(t, err, protocol.ReasonLimitExceeded)
		}
	})
}

func mustID(t *testing.T, key string) int64 {
	t.Helper()
	id, ok := protocol.ParseIDString(key, "th_")
	if !ok {
		t.Fatalf("bad key %s", key)
	}
	return id
}
