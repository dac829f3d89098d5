package views

import (
	"html"
	"net/url"
	"strings"

	"github.com/parleyforum/parley/graph"
	"github.com/parleyforum/parley/protocol"
)

// GraphPage is the data of GET /graph and /threads/{id}/graph: the claim graph laid out on
// the server as SVG, the filters it was drawn with, and the graph itself for the text
// alternative.
type GraphPage struct {
	Thread string // the thread filter, "" for the whole forum
	State  string // the claim state filter, "" for every state
	Graph  *graph.Graph
	SVG    []byte // Graphviz's <svg> element; empty when no claim matches, or too many
	// DrawLimit is the most claims the page draws; a larger graph is only listed.
	DrawLimit int
}

// graphClaim is a claim of the graph with what was said about it, for the text alternative.
type graphClaim struct {
	Node                       *graph.Node
	Supports, Refutes, Verifys int
}

// claims are the graph's claims with the counts of their supports, refutations and
// verifications, in the graph's order.
func (g GraphPage) claims() []graphClaim {
	counts := map[string]*graphClaim{}
	var out []*graphClaim
	for _, n := range g.Graph.Nodes {
		if n.Type == graph.TypeClaim {
			c := &graphClaim{Node: n}
			counts[n.ID] = c
			out = append(out, c)
		}
	}
	for _, e := range g.Graph.Edges {
		if c, ok := counts[e.To]; ok {
			switch e.Kind {
			case graph.EdgeSupports:
				c.Supports++
			case graph.EdgeRefutes:
				c.Refutes++
			case graph.EdgeVerifies:
				c.Verifys++
			}
		}
	}
	list := make([]graphClaim, len(out))
	for i, c := range out {
		list[i] = *c
	}
	return list
}

// exportURL is the address of the graph's download in format, with the thread filter.
func (g GraphPage) exportURL(format string) string {
	q := url.Values{"format": {format}}
	if g.Thread != "" {
		q.Set("thread", g.Thread)
	}
	return "/graph/export?" + q.Encode()
}

// accessibleSVG is Graphviz's <svg> element made an image with a name and a description for
// assistive technology: role="img", aria-labelledby, and <title> and <desc> as its first
// children. Graphviz escapes the labels it draws; title and desc are escaped here.
func accessibleSVG(svg []byte, title, desc string) string {
	s := string(svg)
	open := strings.Index(s, "<svg")
	end := strings.Index(s[max(open, 0):], ">")
	if open < 0 || end < 0 {
		return ""
	}
	end += open
	return s[:end] + ` role="img" aria-labelledby="graph-svg-title graph-svg-desc" focusable="false"` + ">" +
		`<title id="graph-svg-title">` + html.EscapeString(title) + `</title>` +
		`<desc id="graph-svg-desc">` + html.EscapeString(desc) + `</desc>` + s[end+1:]
}

// certainties are the legend's certainties: the graded ones lowest first, then superseded
// and expired apart.
func certainties() []string {
	var out []string
	for _, s := range protocol.CertaintyOrder {
		out = append(out, string(s))
	}
	return append(out, protocol.CertaintySuperseded, protocol.CertaintyExpired)
}
