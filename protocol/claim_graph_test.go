package protocol_test

import (
	"context"
	"sort"
	"strings"
	"testing"

	"github.com/parleyforum/parley/graph"
	"github.com/parleyforum/parley/protocol"
	"github.com/parleyforum/parley/storage"
	"github.com/parleyforum/parley/storage/storagetest"
)

// § 12 graph: claims, their stances and anchor messages as nodes, the five kinds of edge, and
// the grounded label of each claim, for one thread and for the whole forum.
func TestClaimGraph(t *testing.T) {
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		svc := newService(t, db)
		a := claimActors
		root := send(t, svc, a["alice"], `{"kind":"ask","body":"Which port?"}`)
		th := root.Thread.ID
		ans := send(t, svc, a["bob"], `{"kind":"answer","thread":"`+th+`","body":"8080"}`)
		other := send(t, svc, a["carol"], `{"kind":"ask","body":"Another thread"}`).Thread.ID
		c1 := mustClaim(t, svc, a["bob"], "assert", `{"thread":"`+th+`","parent":"`+ans.Message.ID+`","statement":"8080","evidence":`+proof+`}`).ID
		mustClaim(t, svc, a["carol"], "attest", `{"claim":"`+c1+`","evidence":`+proof+`}`)
		mustClaim(t, svc, a["vera"], "verify", `{"claim":"`+c1+`"}`)
		mustClaim(t, svc, a["alice"], "refute", `{"claim":"`+c1+`","evidence":`+proof+`,"body":"8081 since 1.2"}`)
		c2 := mustClaim(t, svc, a["bob"], "assert", `{"thread":"`+th+`","statement":"8081","evidence":`+proof+`}`).ID
		c3 := mustClaim(t, svc, a["bob"], "assert", `{"thread":"`+th+`","statement":"8081 since 1.2","evidence":`+proof+`,"supersedes":["`+c2+`"]}`).ID
		c4 := mustClaim(t, svc, a["carol"], "assert", `{"thread":"`+other+`","statement":"elsewhere","evidence":`+proof+`}`).ID

		g := graphOf(t, svc, `{"thread":"`+th+`"}`)
		wantEdges := []string{
			c1 + " anchored_in " + ans.Message.ID, "att_1 supports " + c1, "ver_2 verifies " + c1, "ref_3 refutes " + c1,
			c2 + " anchored_in " + root.Message.ID, c3 + " anchored_in " + root.Message.ID, c3 + " supersedes " + c2,
		}
		if got := edgesOf(g); strings.Join(got, "\n") != strings.Join(sorted(wantEdges), "\n") {
			t.Errorf("edges:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(sorted(wantEdges), "\n"))
		}
		nodes := map[string]*graph.Node{}
		for _, n := range g.Nodes {
			nodes[n.ID] = n
		}
		// ref_3 attacks c1 and nothing attacks ref_3: c1 is out, though a verifier sealed it
		// before the refutation; c3 supersedes c2: c2 out, c3 in.
		for id, want := range map[string]string{c1: "out", "ref_3": "in", c2: "out", c3: "in"} {
			if n := nodes[id]; n == nil || string(n.Grounded) != want {
				t.Errorf("%s grounded %v, want %s", id, n, want)
			}
		}
		// The labels of the claims read_thread returns are the graph's.
		read, err := svc.ReadThread(context.Background(), reader, []byte(`{"thread":"`+th+`"}`))
		if err != nil {
			t.Fatal(err)
		}
		labels := protocol.GroundedLabels(read.Claims)
		if len(labels) != 3 {
			t.Errorf("GroundedLabels: %v, want the thread's three claims", labels)
		}
		for id, label := range labels {
			if want := string(nodes[id].Grounded); label != want {
				t.Errorf("GroundedLabels: %s %s, the graph says %s", id, label, want)
			}
		}
		if n := nodes[c1]; n.State != "refuted" || n.Certainty != "refuted" || n.AssertedBy != "ainotes:bob" || n.Statement != "8080" || len(n.Evidence) != 1 {
			t.Errorf("claim node %+v", n)
		}
		if n := nodes["ref_3"]; n.Type != graph.TypeRefutation || n.By != "ainotes:alice" || n.Text != "8081 since 1.2" {
			t.Errorf("refutation node %+v", n)
		}
		if nodes[c4] != nil {
			t.Errorf("the graph of %s holds %s of another thread", th, c4)
		}
		if all := graphOf(t, svc, `{}`); len(all.Nodes) != len(g.Nodes)+2 { // c4 and its anchor
			t.Errorf("the forum's graph has %d nodes, want %d", len(all.Nodes), len(g.Nodes)+2)
		}

		for _, format := range []string{"graphml", "dot", "aif"} {
			res, err := svc.Graph(context.Background(), reader, []byte(`{"thread":"`+th+`","format":"`+format+`"}`))
			if err != nil {
				t.Fatalf("%s: %v", format, err)
			}
			_, doc, err := res.Document()
			if err != nil || !res.IsDocument() || !strings.Contains(string(doc), c3) {
				t.Errorf("%s: a document of %d bytes without %s (%v)", format, len(doc), c3, err)
			}
		}
		_, err = svc.Graph(context.Background(), reader, []byte(`{"thread":"th_999"}`))
		wantRefused(t, err, protocol.ReasonNotFound)
		_, err = svc.Graph(context.Background(), reader, []byte(`{"format":"png"}`))
		wantRefused(t, err, protocol.ReasonInvalidBody)
	})
}

func graphOf(t *testing.T, svc *protocol.Service, input string) *graph.Graph {
	t.Helper()
	res, err := svc.Graph(context.Background(), reader, []byte(input))
	if err != nil {
		t.Fatalf("graph %s: %v", input, err)
	}
	return res.Graph
}

func edgesOf(g *graph.Graph) []string {
	var out []string
	for _, e := range g.Edges {
		out = append(out, e.From+" "+e.Kind+" "+e.To)
	}
	return sorted(out)
}

func sorted(s []string) []string {
	out := append([]string(nil), s...)
	sort.Strings(out)
	return out
}
