package graph

// Source is a graph as the formats read it: its nodes in order, then its edges in order, each
// as often as a format needs (GraphML writes the nodes and then the edges; AIF passes over
// both several times). A Graph in memory is one; an export reads one from the database a
// page at a time (PROTOCOL.md § 19), so that a format never holds the whole graph.
type Source interface {
	// EachNode calls fn with every node, in order, until fn fails.
	EachNode(fn func(*Node) error) error
	// EachEdge calls fn with every edge, in order, and the nodes it joins: from always; to
	// when the source holds it at that moment — always the claim of a stance's edge
	// (supports, refutes, verifies), which is all a format asks of it.
	EachEdge(fn func(e *Edge, from, to *Node) error) error
}

// EachNode calls fn with each of g's nodes.
func (g *Graph) EachNode(fn func(*Node) error) error {
	for _, n := range g.Nodes {
		if err := fn(n); err != nil {
			return err
		}
	}
	return nil
}

// EachEdge calls fn with each of g's edges and the nodes it joins (nil for one not in g).
func (g *Graph) EachEdge(fn func(e *Edge, from, to *Node) error) error {
	byID := make(map[string]*Node, len(g.Nodes))
	for _, n := range g.Nodes {
		byID[n.ID] = n
	}
	for _, e := range g.Edges {
		if err := fn(e, byID[e.From], byID[e.To]); err != nil {
			return err
		}
	}
	return nil
}
