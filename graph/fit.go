package graph

// What a page draws is bounded by nodes and edges, not by claims alone: a thread within the
// limits (200 claims × 100 stances) is 20,000 stances, which Graphviz took 25 s and 540 MB to
// draw. Measured with the drawing processes (TestLargestDrawingIsBounded prints the figures):
// 1,000 nodes take Graphviz about a quarter of a second and under 100 MB, 4,000 nodes over a
// second and 160 MB, 8,000 three seconds and 200 MB — and the SVG of 1,000 nodes is about
// 1.5 MB, what a page may still carry inline.
const (
	DrawMaxNodes = 1000
	DrawMaxEdges = 1500
)

// Bound is the most nodes and edges a drawing holds.
type Bound struct{ Nodes, Edges int }

// DrawingBound is the bound of the pages' drawings.
var DrawingBound = Bound{Nodes: DrawMaxNodes, Edges: DrawMaxEdges}

// Fit is g as drawn within b. Every stance (attestation, refutation, verification) is drawn
// while the whole graph fits; otherwise each claim keeps as many of its stances as lets the
// graph fit, the same number for every claim (its first ones, in the graph's order), and the
// rest are folded into a count on their claim (Node.Folded). folded is how many stances are
// not drawn; fits is false when the graph holds more than b even with every stance folded.
// The claims drawn are copies: g is not changed.
func (g *Graph) Fit(b Bound) (drawn *Graph, folded int, fits bool) {
	if len(g.Nodes) <= b.Nodes && len(g.Edges) <= b.Edges {
		return g, 0, true
	}
	claimOf := map[string]string{} // stance → the claim it is on
	for _, e := range g.Edges {
		if isStanceEdge(e.Kind) {
			claimOf[e.From] = e.To
		}
	}
	perClaim := map[string]int{}
	most := 0
	for _, claim := range claimOf {
		perClaim[claim]++
		most = max(most, perClaim[claim])
	}
	// Each stance is one node and one edge: keeping k per claim drawn, the graph holds what
	// is no stance and min(k, stances) of each claim.
	others, otherEdges := len(g.Nodes)-len(claimOf), len(g.Edges)-len(claimOf)
	keep := -1
	for k := most; k >= 0; k-- {
		kept := 0
		for _, n := range perClaim {
			kept += min(k, n)
		}
		if others+kept <= b.Nodes && otherEdges+kept <= b.Edges {
			keep = k
			break
		}
	}
	if keep < 0 {
		return g, 0, false
	}
	drawnOf := map[string]int{} // stances drawn so far, by claim
	dropped := map[string]bool{}
	foldedOn := map[string]int{}
	for _, n := range g.Nodes {
		claim, stance := claimOf[n.ID]
		if !stance {
			continue
		}
		if drawnOf[claim] < keep {
			drawnOf[claim]++
			continue
		}
		dropped[n.ID] = true
		foldedOn[claim]++
		folded++
	}
	drawn = &Graph{Nodes: make([]*Node, 0, len(g.Nodes)-folded), Edges: make([]*Edge, 0, len(g.Edges)-folded)}
	for _, n := range g.Nodes {
		switch {
		case dropped[n.ID]:
		case foldedOn[n.ID] > 0:
			c := *n
			c.Folded = foldedOn[n.ID]
			drawn.Nodes = append(drawn.Nodes, &c)
		default:
			drawn.Nodes = append(drawn.Nodes, n)
		}
	}
	for _, e := range g.Edges {
		if !dropped[e.From] {
			drawn.Edges = append(drawn.Edges, e)
		}
	}
	return drawn, folded, true
}

// isStanceEdge reports whether an edge of kind runs from a stance to its claim.
func isStanceEdge(kind string) bool {
	return kind == EdgeSupports || kind == EdgeRefutes || kind == EdgeVerifies
}
