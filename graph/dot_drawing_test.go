package graph

import (
	"bytes"
	"context"
	"encoding/xml"
	"io"
	"os/exec"
	"strings"
	"testing"

	"github.com/goccy/go-graphviz"
)

// wellFormed fails t unless doc is well-formed XML.
func wellFormed(t *testing.T, what string, doc []byte) {
	t.Helper()
	dec := xml.NewDecoder(bytes.NewReader(doc))
	for {
		_, err := dec.Token()
		if err == io.EOF {
			return
		}
		if err != nil {
			t.Fatalf("%s is not well-formed XML: %v", what, err)
		}
	}
}

// hostileGraph is the sample graph with control characters in every text a label shows.
func hostileGraph() *Graph {
	g := sampleGraph()
	const hostile = "bad\x01\x08\x0b\x0c\x1b\x7f\u0085\ufffe bytes\tand\r\nlines \xff"
	for _, n := range g.Nodes {
		n.Statement, n.Text, n.By = n.Statement+hostile, n.Text+hostile, n.By+"\x1b"
	}
	return g
}

// controlCharacters are the bytes XML 1.0 does not allow (C0 but tab and line ends) and DEL.
func controlCharacters(b []byte) []byte {
	var out []byte
	for _, c := range b {
		if (c < 0x20 && c != '\t' && c != '\n' && c != '\r') || c == 0x7f {
			out = append(out, c)
		}
	}
	return out
}

// Control characters in a statement neither break Graphviz's SVG (the system's `dot -Tsvg`
// reads the export) nor reach the inline SVG of the pages: DOT drops them.
func TestDOTDropsControlCharacters(t *testing.T) {
	g := hostileGraph()
	var dot bytes.Buffer
	if err := WriteDOT(&dot, g); err != nil {
		t.Fatal(err)
	}
	if bad := controlCharacters(dot.Bytes()); len(bad) > 0 {
		t.Errorf("the DOT carries control characters %q", bad)
	}
	cmd := exec.Command("dot", "-Tsvg")
	cmd.Stdin = bytes.NewReader(dot.Bytes())
	svg, err := cmd.Output()
	if err != nil {
		t.Fatalf("dot -Tsvg: %v", err)
	}
	wellFormed(t, "dot -Tsvg's SVG", svg)
	if !bytes.Contains(svg, []byte("bad bytes and")) {
		t.Errorf("the text around the control characters is lost:\n%s", svg)
	}
	inline, err := RenderSVG(context.Background(), g, Drawing{Lang: "de", Link: func(n *Node) string { return "/threads/" + n.Thread + "#" + n.ID }})
	if err != nil {
		t.Fatal(err)
	}
	wellFormed(t, "the inline SVG", inline)
	if bad := controlCharacters(inline); len(bad) > 0 {
		t.Errorf("the inline SVG carries control characters %q", bad)
	}
}

// DOT carries every attribute GraphML carries, for every node, with the same value: the
// grounded label of refutations, the full statement, expired, the evidence, provenance. As
// Graphviz reads it, a value has its backslashes doubled and nothing else changed.
func TestDOTCarriesEveryGraphMLAttribute(t *testing.T) {
	g := sampleGraph()
	model := "claude-x"
	g.Nodes[1].Provenance = &Provenance{Model: &model}
	g.Nodes[1].Statement += ` ends in \` // a backslash before the closing quote
	g.Nodes[2].Text += ` says \"so\" \\` // backslashes before quotes, and two together
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
		t.Fatal(err)
	}
	defer parsed.Close()
	checked := map[string]bool{}
	for _, want := range g.Nodes {
		n, err := parsed.NodeByName(want.ID)
		if err != nil || n == nil {
			t.Fatalf("node %s missing: %v", want.ID, err)
		}
		for _, a := range nodeAttributes {
			if v := a.of(want); v != "" {
				checked[a.name] = true
				if got := strings.ReplaceAll(n.GetStr(a.name), `\\`, `\`); got != dotClean(v) {
					t.Errorf("node %s: DOT's %s is %q, GraphML's %q", want.ID, a.name, got, v)
				}
			}
		}
	}
	for _, name := range []string{"grounded", "statement", "expired", "evidence", "text", "provenance_model"} {
		if !checked[name] {
			t.Errorf("the sample graph never checks %s", name)
		}
	}
	if n, _ := parsed.NodeByName("rf_2"); n.GetStr("grounded") != "in" {
		t.Errorf("a refutation's grounded label is %q in DOT, want in", n.GetStr("grounded"))
	}
}

// The page's drawing speaks the reader's language, in node and edge labels, writes dark
// fills in white, and links every node.
func TestDrawingSpeaksTheReadersLanguage(t *testing.T) {
	link := func(n *Node) string { return "/threads/" + n.Thread + "#" + n.ID }
	de, err := RenderSVG(context.Background(), sampleGraph(), Drawing{Lang: "de", Link: link})
	if err != nil {
		t.Fatal(err)
	}
	en, err := RenderSVG(context.Background(), sampleGraph(), Drawing{Lang: "en"})
	if err != nil {
		t.Fatal(err)
	}
	text := func(svg []byte) string { // the words drawn, as a reader sees them
		var out []string
		dec := xml.NewDecoder(bytes.NewReader(svg))
		inText := false
		for {
			tok, err := dec.Token()
			if err != nil {
				break
			}
			switch tok := tok.(type) {
			case xml.StartElement:
				inText = tok.Name.Local == "text"
			case xml.EndElement:
				inText = false
			case xml.CharData:
				if inText {
					out = append(out, string(tok))
				}
			}
		}
		return strings.Join(out, "\n")
	}
	for _, c := range []struct {
		svg       []byte
		want, not []string
	}{
		{de, []string{"widerlegt", "ersetzt", "begründet: OUT", "stützt", "prüft", "verankert in", "Widerlegung · ainotes:bob", "Bezeugung · ainotes:carol", "Prüfsiegel · human:ada"},
			[]string{"supports", "anchored_in", "refuted", "attestation", "[verified"}},
		{en, []string{"refuted", "grounded: OUT", "supports", "verifies", "anchored in", "refutation · ainotes:bob"}, []string{"widerlegt", "stützt"}},
	} {
		words := text(c.svg)
		for _, w := range c.want {
			if !strings.Contains(words, w) {
				t.Errorf("the drawing lacks %q:\n%s", w, words)
			}
		}
		for _, w := range c.not {
			if strings.Contains(words, w) {
				t.Errorf("the drawing shows %q:\n%s", w, words)
			}
		}
	}
	for _, n := range sampleGraph().Nodes {
		if !bytes.Contains(de, []byte(`href="`+link(n)+`"`)) {
			t.Errorf("node %s links nowhere", n.ID)
		}
	}
	if bytes.Contains(en, []byte("href=")) {
		t.Error("a drawing without links has links")
	}
}

// A thread of many claims draws as a column, not a row: 200 claims stay about one screen
// wide (they drew 71,470 pt wide, 59 screens, before the ranks ran left to right).
func TestManyClaimsDrawNarrow(t *testing.T) {
	for _, n := range []int{4, 100, 200} {
		svg, err := RenderSVG(context.Background(), manyClaims(n), Drawing{})
		if err != nil {
			t.Fatal(err)
		}
		w, h := drawnSize(svg)
		t.Logf("%d claims: %.0f × %.0f pt", n, w, h)
		if w == 0 || w > 1300 {
			t.Errorf("%d claims draw %.0f pt wide, want at most 1300", n, w)
		}
	}
}
