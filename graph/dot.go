package graph

import (
	"bufio"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/parleyforum/parley/locale"
)

// DOT, the language of Graphviz: one statement per node and edge, every attribute quoted.
// Each node carries every attribute GraphML carries (nodeAttributes), and what Graphviz
// draws with: a label, a shape, the fill of its certainty with a text colour that reads on it
// (TextColour), an id and a class. The ranks run left to right and long texts are wrapped, so
// that a thread of many claims grows downwards, a column a screen can follow, instead of
// sideways.

// CertaintyColours fill a claim by its certainty; the other nodes are drawn plain.
var CertaintyColours = map[string]string{
	"verified":   "#2e7d32",
	"supported":  "#a5d6a7",
	"unverified": "#fff59d",
	"refuted":    "#ef9a9a",
	"superseded": "#cfd8dc",
	"expired":    "#e0e0e0",
}

// plainFill is the fill of the nodes that are not claims.
const plainFill = "#ffffff"

var nodeShapes = map[string]string{
	TypeClaim: "box", TypeAttestation: "ellipse", TypeRefutation: "octagon",
	TypeVerification: "doubleoctagon", TypeMessage: "note",
}

// Drawing is how a graph is drawn for a reader: the language of the words in its labels
// (certainty, grounded label, node types, edge kinds) and where each node links to. The zero
// Drawing is the export's: English words, no links.
type Drawing struct {
	Lang string
	// Link is a node's address, "" for none; Graphviz makes the node a link to it.
	Link func(*Node) string
}

// How much of a text a label shows, and the width it is wrapped at, in characters: the whole
// text is in the node's attributes (and, drawn for a page, in its tooltip).
const (
	labelClaimChars = 120
	labelOtherChars = 60
	labelWrapChars  = 32
)

// dotClean is s as DOT may carry it and the SVG that Graphviz draws from it may too: valid
// UTF-8 without control characters (XML 1.0 forbids all of C0 but tab and the line ends, and
// Graphviz writes them through into its SVG as they are). A tab becomes a space, a line break
// stays (dotQuote writes it as \n), every other control character is dropped.
func dotClean(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	return strings.Map(func(r rune) rune {
		switch {
		case r == '\n':
			return r
		case r == '\t':
			return ' '
		case r < 0x20, r >= 0x7f && r <= 0x9f, r == 0xfffe, r == 0xffff:
			return -1
		}
		return r
	}, s)
}

// dotQuote writes s as a DOT quoted string for an attribute Graphviz reads as an escString
// (a label, a tooltip), cleaned of control characters: a backslash is doubled, a quote
// escaped, a line break written \n, which Graphviz turns back into each.
func dotQuote(s string) string {
	return `"` + dotQuoteReplacer.Replace(dotClean(s)) + `"`
}

var dotQuoteReplacer = strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`)

// dotValue writes s as a DOT quoted string for a data attribute, cleaned of control
// characters. Graphviz's reader turns only \" back into a quote and keeps a backslash as
// written, so a lone backslash before a quote or at the end could end the string: every
// backslash is written doubled, and a reader halves them (docs/dialectic.md says so). A line
// break stays a line break, which a quoted DOT string may hold.
func dotValue(s string) string {
	return `"` + dotValueReplacer.Replace(dotClean(s)) + `"`
}

var dotValueReplacer = strings.NewReplacer(`\`, `\\`, `"`, `\"`)

// shorten keeps a label readable.
func shorten(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

// wrap breaks s into lines of at most width characters at spaces, a longer word alone on
// its lines, cut where it must be.
func wrap(s string, width int) string {
	var lines []string
	line := ""
	for _, word := range strings.Fields(s) {
		for utf8.RuneCountInString(word) > width {
			if line != "" {
				lines, line = append(lines, line), ""
			}
			r := []rune(word)
			lines, word = append(lines, string(r[:width])), string(r[width:])
		}
		switch {
		case line == "":
			line = word
		case utf8.RuneCountInString(line)+1+utf8.RuneCountInString(word) <= width:
			line += " " + word
		default:
			lines, line = append(lines, line), word
		}
	}
	if line != "" {
		lines = append(lines, line)
	}
	return strings.Join(lines, "\n")
}

// dotLabel is what a node shows, its words in tr's language.
func dotLabel(n *Node, tr *locale.Translator) string {
	var head, text string
	switch n.Type {
	case TypeClaim:
		head = n.ID + " · " + tr.T("claim.certainty."+n.Certainty)
		if n.Grounded != "" {
			head += " · " + tr.T("claim.grounded") + " " + strings.ToUpper(string(n.Grounded))
		}
		text = shorten(n.Statement, labelClaimChars)
		if n.Folded > 0 {
			head += "\n" + tr.N("graph.folded", n.Folded)
		}
	case TypeMessage:
		head, text = n.ID+" · "+n.By, shorten(n.Text, labelOtherChars)
	case TypeVerification, TypeAttestation, TypeRefutation:
		head, text = tr.T("graph.node."+n.Type)+" · "+n.By, shorten(n.Text, labelOtherChars)
	default:
		return n.ID
	}
	if text = wrap(dotClean(text), labelWrapChars); text == "" {
		return head
	}
	return head + "\n" + text
}

// fullText is a node's whole text, its tooltip.
func fullText(n *Node) string {
	if n.Type == TypeClaim {
		return n.Statement
	}
	return n.Text
}

// WriteDOT writes the graph as a DOT digraph, for export: English words, no links.
func WriteDOT(w io.Writer, src Source) error {
	return writeDOT(w, src, Drawing{})
}

// writeDOT writes the graph as DOT, a statement at a time.
func writeDOT(w io.Writer, src Source, d Drawing) error {
	tr := locale.For(d.Lang)
	b := bufio.NewWriterSize(w, 32<<10)
	b.WriteString("digraph parley {\n  rankdir=LR;\n  ranksep=0.5;\n  nodesep=0.15;\n" +
		"  node [style=filled, fillcolor=\"" + plainFill + "\", fontcolor=\"" + TextColour(plainFill) + "\", fontname=\"Helvetica\", fontsize=12];\n" +
		"  edge [fontname=\"Helvetica\", fontsize=10];\n")
	err := src.EachNode(func(n *Node) error {
		writeDOTNode(b, n, d, tr)
		_, err := b.Write(nil) // bufio.Writer answers its first error from every call
		return err
	})
	if err != nil {
		return err
	}
	err = src.EachEdge(func(e *Edge, _, _ *Node) error {
		style := "solid"
		if e.Kind == EdgeRefutes || e.Kind == EdgeSupersedes {
			style = "dashed"
		}
		_, err := fmt.Fprintf(b, "  %s -> %s [kind=%s, label=%s, style=%s];\n", dotQuote(e.From), dotQuote(e.To), dotQuote(e.Kind), dotQuote(tr.T("graph.edge."+e.Kind)), style)
		return err
	})
	if err != nil {
		return err
	}
	b.WriteString("}\n")
	return b.Flush()
}

// writeDOTNode writes one node's statement.
func writeDOTNode(b *bufio.Writer, n *Node, d Drawing, tr *locale.Translator) {
	// id and class reach the SVG that Graphviz draws (<g id="cl_1" class="node claim …">),
	// so that a page can find and style each node.
	class := n.Type
	if n.Type == TypeClaim {
		class += " certainty-" + n.Certainty + " grounded-" + string(n.Grounded)
	}
	attrs := [][2]string{{"label", dotLabel(n, tr)}, {"shape", nodeShapes[n.Type]}, {"id", n.ID}, {"class", class}}
	if fill, ok := CertaintyColours[n.Certainty]; ok && n.Type == TypeClaim {
		attrs = append(attrs, [2]string{"fillcolor", fill}, [2]string{"fontcolor", TextColour(fill)})
	}
	var data [][2]string
	for _, a := range nodeAttributes {
		if v := a.of(n); v != "" {
			data = append(data, [2]string{a.name, v})
		}
	}
	if d.Link != nil {
		if href := d.Link(n); href != "" {
			attrs = append(attrs, [2]string{"URL", href}, [2]string{"target", "_top"})
			if t := fullText(n); t != "" {
				attrs = append(attrs, [2]string{"tooltip", shorten(t, 500)})
			}
		}
	}
	fmt.Fprintf(b, "  %s [", dotQuote(n.ID))
	for i, a := range attrs {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(b, "%s=%s", a[0], dotQuote(a[1]))
	}
	for _, a := range data {
		fmt.Fprintf(b, ", %s=%s", a[0], dotValue(a[1]))
	}
	b.WriteString("];\n")
}
