package graph

// Only keeps the claims whose state is one of states, with what hangs on them: their
// attestations, refutations and verifications, the messages they are anchored in, and the
// edges among what is kept (so a supersession shows only when both claims are kept). The
// grounded labels stay those of the whole graph: a filter shows less, it does not change
// what attacks what. No states keeps everything.
func (g *Graph) Only(states ...string) *Graph {
	if len(states) == 0 {
		return g
	}
	want := map[string]bool{}
	for _, s := range states {
		want[s] = true
	}
	keep := map[string]bool{}
	for _, n := range g.Nodes {
		if n.Type == TypeClaim && want[n.State] {
			keep[n.ID] = true
		}
	}
	for _, e := range g.Edges {
		switch {
		case e.Kind == EdgeAnchoredIn && keep[e.From]:
			keep[e.To] = true
		case (e.Kind == EdgeSupports || e.Kind == EdgeRefutes || e.Kind == EdgeVerifies) && keep[e.To]:
			keep[e.From] = true
		}
	}
	out := &Graph{Nodes: []*Node{}, Edges: []*Edge{}}
	for _, n := range g.Nodes {
		if keep[n.ID] {
			out.Nodes = append(out.Nodes, n)
		}
	}
	for _, e := range g.Edges {
		if keep[e.From] && keep[e.To] {
			out.Edges = append(out.Edges, e)
		}
	}
	return out
}
