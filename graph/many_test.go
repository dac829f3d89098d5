package graph

import (
	"fmt"
	"regexp"
	"strconv"
	"time"
)

// manyClaims is a thread of n claims anchored in one question, as a busy thread grows: every
// other claim attested, every third refuted, every fifth superseding the one before, each
// with a statement of a realistic length.
func manyClaims(n int) *Graph {
	at := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	no := false
	g := &Graph{Nodes: []*Node{{ID: "msg_1", Type: TypeMessage, Thread: "th_1", By: "ainotes:alice", Kind: "ask", Text: "Which port does parley serve listen on, and why?", At: at}}}
	stance := 0
	for i := 1; i <= n; i++ {
		id := "cl_" + strconv.Itoa(i)
		state := "unverified"
		g.Edges = append(g.Edges, &Edge{From: id, To: "msg_1", Kind: EdgeAnchoredIn})
		add := func(typ, kind string) {
			stance++
			sid := fmt.Sprintf("st_%d", stance)
			g.Nodes = append(g.Nodes, &Node{ID: sid, Type: typ, Thread: "th_1", By: "ainotes:bob", Text: "reproduced on a fresh checkout", At: at})
			g.Edges = append(g.Edges, &Edge{From: sid, To: id, Kind: kind})
		}
		switch {
		case i%3 == 0:
			add(TypeRefutation, EdgeRefutes)
			state = "refuted"
		case i%2 == 0:
			add(TypeAttestation, EdgeSupports)
			state = "supported"
		}
		if i%5 == 0 && i > 1 {
			g.Edges = append(g.Edges, &Edge{From: id, To: "cl_" + strconv.Itoa(i-1), Kind: EdgeSupersedes})
		}
		g.Nodes = append(g.Nodes, &Node{ID: id, Type: TypeClaim, Thread: "th_1", State: state, Certainty: state, Expired: &no, AssertedBy: "ainotes:alice",
			Statement: fmt.Sprintf("parley serve listens on port %d by default unless PARLEY_ADDR names another address", 8000+i), At: at})
	}
	g.LabelGrounded()
	return g
}

var svgSize = regexp.MustCompile(`viewBox="[-0-9.]+ [-0-9.]+ ([0-9.]+) ([0-9.]+)"`)

// drawnSize is the width and height in points of a Graphviz SVG.
func drawnSize(svg []byte) (w, h float64) {
	m := svgSize.FindSubmatch(svg)
	if m == nil {
		return 0, 0
	}
	w, _ = strconv.ParseFloat(string(m[1]), 64)
	h, _ = strconv.ParseFloat(string(m[2]), 64)
	return w, h
}
