package graph

import (
	"strings"
	"testing"
)

// A filter by claim state keeps those claims with their stances and anchors, and the edges
// among them; the grounded labels are the whole graph's. A claim's neighbourhood keeps it, what
// touches it, and the stances on the claims that touch it, and nothing of the claims beside it.
func TestOnly(t *testing.T) {
	g := sampleGraph()
	ids := func(g *Graph) string {
		var out []string
		for _, n := range g.Nodes {
			out = append(out, n.ID)
		}
		for _, e := range g.Edges {
			out = append(out, e.From+">"+e.To)
		}
		return strings.Join(out, " ")
	}
	cases := []struct {
		states []string
		want   string
	}{
		{nil, ids(g)},
		{[]string{"refuted"}, "msg_1 cl_1 rf_2 cl_1>msg_1 rf_2>cl_1"},
		{[]string{"verified"}, "msg_1 cl_4 at_5 vf_6 cl_4>msg_1 at_5>cl_4 vf_6>cl_4"},
		{[]string{"verified", "superseded"}, "msg_1 cl_3 cl_4 at_5 vf_6 cl_3>msg_1 cl_4>msg_1 cl_4>cl_3 at_5>cl_4 vf_6>cl_4"},
		{[]string{"unverified"}, ""},
	}
	for _, c := range cases {
		if got := ids(g.Only(c.states...)); got != c.want {
			t.Errorf("Only(%v): %s, want %s", c.states, got, c.want)
		}
	}
	for claim, want := range map[string]string{
		"cl_1": "msg_1 cl_1 rf_2 cl_1>msg_1 rf_2>cl_1",
		"cl_3": "msg_1 cl_3 cl_4 at_5 vf_6 cl_3>msg_1 cl_4>msg_1 cl_4>cl_3 at_5>cl_4 vf_6>cl_4",
		"cl_4": "msg_1 cl_3 cl_4 at_5 vf_6 cl_3>msg_1 cl_4>msg_1 cl_4>cl_3 at_5>cl_4 vf_6>cl_4",
		"cl_9": "", "rf_2": "", "msg_1": "",
	} {
		if got := ids(g.Around(claim)); got != want {
			t.Errorf("Around(%s): %s, want %s", claim, got, want)
		}
	}
	if l := g.Only("superseded").Nodes[1]; l.ID != "cl_3" || l.Grounded != Out {
		t.Errorf("the superseded claim alone reads %s %s, want cl_3 out (its superseder is in the whole graph)", l.ID, l.Grounded)
	}
}
