package graph

import (
	"fmt"
	"io"
	"strings"
	"time"
)

// DOT, the language of Graphviz: one statement per node and edge, every attribute quoted.
// The fill colour follows the certainty, so that `dot -Tsvg` draws a readable picture as is.

// CertaintyColours fill a claim by its certainty; the other nodes are drawn plain.
var CertaintyColours = map[string]string{
	"verified":   "#2e7d32",
	"supported":  "#a5d6a7",
	"unverified": "#fff59d",
	"refuted":    "#ef9a9a",
	"superseded": "#cfd8dc",
	"expired":    "#e0e0e0",
}

var nodeShapes = map[string]string{
	TypeClaim: "box", TypeAttestation: "ellipse", TypeRefutation: "octagon",
	TypeVerification: "doubleoctagon", TypeMessage: "note",
}

// dotQuote writes s as a DOT quoted string.
func dotQuote(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`, "\r", "")
	return `"` + r.Replace(s) + `"`
}

// shorten keeps a label readable.
func shorten(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

// dotLabel is what a node shows.
func dotLabel(n *Node) string {
	switch n.Type {
	case TypeClaim:
		return fmt.Sprintf("%s [%s, %s]\n%s", n.ID, n.Certainty, n.Grounded, shorten(n.Statement, 60))
	case TypeMessage:
		return fmt.Sprintf("%s %s\n%s", n.ID, n.By, shorten(n.Text, 40))
	case TypeVerification, TypeAttestation, TypeRefutation:
		if n.Text == "" {
			return n.Type + " " + n.By
		}
		return fmt.Sprintf("%s %s\n%s", n.Type, n.By, shorten(n.Text, 40))
	default:
		return n.ID
	}
}

// WriteDOT writes g as a DOT digraph.
func WriteDOT(w io.Writer, g *Graph) error {
	var b strings.Builder
	b.WriteString("digraph parley {\n  rankdir=BT;\n  node [style=filled, fillcolor=\"#ffffff\", fontname=\"Helvetica\"];\n  edge [fontname=\"Helvetica\", fontsize=10];\n")
	for _, n := range g.Nodes {
		// id and class reach the SVG that Graphviz draws (<g id="cl_1" class="node claim …">),
		// so that a page can find and style each node.
		class := n.Type
		if n.Type == TypeClaim {
			class += " certainty-" + n.Certainty + " grounded-" + string(n.Grounded)
		}
		attrs := [][2]string{
			{"label", dotLabel(n)}, {"shape", nodeShapes[n.Type]}, {"type", n.Type}, {"thread", n.Thread},
			{"time", n.At.UTC().Format(time.RFC3339Nano)}, {"id", n.ID}, {"class", class},
		}
		if n.Type == TypeClaim {
			attrs = append(attrs, [2]string{"fillcolor", CertaintyColours[n.Certainty]}, [2]string{"state", n.State},
				[2]string{"certainty", n.Certainty}, [2]string{"grounded", string(n.Grounded)}, [2]string{"identity", n.AssertedBy})
		} else {
			attrs = append(attrs, [2]string{"identity", n.By})
		}
		if m := n.ProvenanceModel(); m != "" {
			attrs = append(attrs, [2]string{"provenance_model", m})
		}
		if c := n.ProvenanceClient(); c != "" {
			attrs = append(attrs, [2]string{"provenance_client", c})
		}
		fmt.Fprintf(&b, "  %s [", dotQuote(n.ID))
		for i, a := range attrs {
			if i > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, "%s=%s", a[0], dotQuote(a[1]))
		}
		b.WriteString("];\n")
	}
	for _, e := range g.Edges {
		style := "solid"
		if e.Kind == EdgeRefutes || e.Kind == EdgeSupersedes {
			style = "dashed"
		}
		fmt.Fprintf(&b, "  %s -> %s [kind=%s, label=%s, style=%s];\n", dotQuote(e.From), dotQuote(e.To), dotQuote(e.Kind), dotQuote(e.Kind), style)
	}
	b.WriteString("}\n")
	_, err := io.WriteString(w, b.String())
	return err
}
