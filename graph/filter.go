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

// Around is one claim's neighbourhood: the claim, every node joined to it by an edge (its
// attestations, refutations and verifications, the message it is anchored in, the claims it
// supersedes and those that supersede it), and the stances on those neighbouring claims, so
// that each claim drawn shows why it is in its state; with the edges among what is kept.
// Grounded labels stay those of the whole graph. An unknown claim keeps nothing.
func (g *Graph) Around(claim string) *Graph {
	keep := map[string]bool{}
	for _, n := range g.Nodes {
		if n.ID == claim && n.Type == TypeClaim {
			keep[n.ID] = true
		}
	}
	claims := map[string]bool{claim: keep[claim]}
	for _, e := range g.Edges {
		switch {
		case e.From == claim && keep[claim]:
			keep[e.To] = true
			claims[e.To] = claims[e.To] || e.Kind == EdgeSupersedes
		case e.To == claim && keep[claim]:
			keep[e.From] = true
			claims[e.From] = claims[e.From] || e.Kind == EdgeSupersedes
		}
	}
	for _, e := range g.Edges {
		if claims[e.To] && (e.Kind == EdgeSupports || e.Kind == EdgeRefutes || e.Kind == EdgeVerifies) {
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
