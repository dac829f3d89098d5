package graph

import (
	"bytes"
	"context"
	"encoding/xml"
	"io"
	"strings"
	"testing"

	"github.com/goccy/go-graphviz"
)

// The DOT export is read by Graphviz itself: every node with its attributes, every edge with
// its kind and its ends.
func TestDOTIsReadByGraphviz(t *testing.T) {
	g := sampleGraph()
	var dot bytes.Buffer
	if err := WriteDOT(&dot, g); err != nil {
		t.Fatal(err)
	}
	if _, err := renderer(context.Background()); err != nil {
		t.Fatal(err)
	}
	rendering.Lock()
	defer rendering.Unlock()
	parsed, err := graphviz.ParseBytes(dot.Bytes())
	if err != nil {
		t.Fatalf("graphviz cannot parse the DOT: %v\n%s", err, dot.String())
	}
	defer parsed.Close()
	if n, _ := parsed.NodeNum(); n != len(g.Nodes) {
		t.Errorf("graphviz reads %d nodes, want %d", n, len(g.Nodes))
	}
	if n, _ := parsed.EdgeNum(); n != len(g.Edges) {
		t.Errorf("graphviz reads %d edges, want %d", n, len(g.Edges))
	}
	for _, want := range g.Nodes {
		n, err := parsed.NodeByName(want.ID)
		if err != nil || n == nil {
			t.Errorf("node %s missing: %v", want.ID, err)
			continue
		}
		if got := n.GetStr("type"); got != want.Type {
			t.Errorf("node %s: type %q, want %q", want.ID, got, want.Type)
		}
		if got := n.GetStr("grounded"); want.Type == TypeClaim && got != string(want.Grounded) {
			t.Errorf("claim %s: grounded %q, want %q", want.ID, got, want.Grounded)
		}
		if got := n.GetStr("fillcolor"); want.Type == TypeClaim && got != CertaintyColours[want.Certainty] {
			t.Errorf("claim %s: fillcolor %q, want the colour of %s", want.ID, got, want.Certainty)
		}
	}
	var edges []string
	for n, _ := parsed.FirstNode(); n != nil; n, _ = parsed.NextNode(n) {
		for e, _ := parsed.FirstOut(n); e != nil; e, _ = parsed.NextOut(e) {
			tail, _ := e.Tail()
			head, _ := e.Head()
			from, _ := tail.Name()
			to, _ := head.Name()
			edges = append(edges, from+" "+e.GetStr("kind")+" "+to)
		}
	}
	for _, want := range g.Edges {
		if !strings.Contains(strings.Join(edges, "\n")+"\n", want.From+" "+want.Kind+" "+want.To+"\n") {
			t.Errorf("edge %s %s %s missing from %v", want.From, want.Kind, want.To, edges)
		}
	}
}

// The server-side picture: well-formed SVG with every node and each claim's colour.
func TestRenderSVG(t *testing.T) {
	g := sampleGraph()
	svg, err := RenderSVG(context.Background(), g, Drawing{})
	if err != nil {
		t.Fatal(err)
	}
	classes := map[string]string{} // <g> id -> class, as an XML reader sees them
	dec := xml.NewDecoder(bytes.NewReader(svg))
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("the SVG is not well-formed XML: %v", err)
		}
		if el, ok := tok.(xml.StartElement); ok && el.Name.Local == "g" {
			var id, class string
			for _, a := range el.Attr {
				switch a.Name.Local {
				case "id":
					id = a.Value
				case "class":
					class = a.Value
				}
			}
			classes[id] = class
		}
	}
	text := string(svg)
	if !strings.HasPrefix(text, "<svg") {
		t.Fatalf("the SVG does not begin with its <svg> element:\n%.300s", text)
	}
	for _, n := range g.Nodes {
		if !strings.Contains(text, "<title>"+n.ID+"</title>") {
			t.Errorf("node %s is not drawn", n.ID)
		}
		class := n.Type
		if n.Type == TypeClaim {
			class += " certainty-" + n.Certainty + " grounded-" + string(n.Grounded)
		}
		if classes[n.ID] != "node "+class {
			t.Errorf("node %s is a <g> of class %q, want %q", n.ID, classes[n.ID], "node "+class)
		}
		if n.Type == TypeClaim && !strings.Contains(text, `fill="`+CertaintyColours[n.Certainty]+`"`) {
			t.Errorf("claim %s is not filled with the colour of %s", n.ID, n.Certainty)
		}
	}
}
