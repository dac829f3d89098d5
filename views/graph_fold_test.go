package views

import (
	"strings"
	"testing"

	"github.com/parleyforum/parley/graph"
)

// A picture that leaves stances out says so beside it, with how many and the bound, in the
// reader's language; one that leaves nothing out says nothing of it; a graph that fits no
// drawing says why it is not drawn.
func TestGraphPageSaysWhatIsFolded(t *testing.T) {
	g := &graph.Graph{Nodes: []*graph.Node{{ID: "cl_1", Type: graph.TypeClaim, Thread: "th_1", Certainty: "supported"}}}
	svg := []byte(`<svg width="10pt" height="10pt" viewBox="0 0 10 10"><g id="cl_1"></g></svg>`)
	for _, tc := range []struct {
		name, lang string
		page       GraphPage
		want       string
	}{
		{"folded", "en", GraphPage{Graph: g, SVG: svg, Folded: 97, DrawLimit: 200, View: GraphView{Zoom: 1}}, "97 stances are not drawn but counted on their claims"},
		{"gefaltet", "de", GraphPage{Graph: g, SVG: svg, Folded: 1, DrawLimit: 200, View: GraphView{Zoom: 1}}, "1 Stellungnahme ist nicht gezeichnet"},
		{"whole", "en", GraphPage{Graph: g, SVG: svg, DrawLimit: 200, View: GraphView{Zoom: 1}}, ""},
		{"unfit", "en", GraphPage{Graph: g, Unfit: true, DrawLimit: 200, View: GraphView{Zoom: 1}}, "even without its stances"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			doc := render(t, pageContext(tc.lang, nil), GraphPageView(tc.page))
			text := strings.Join(strings.Fields(doc.Find("figure").Text()), " ")
			if tc.want == "" {
				if doc.Find("[data-folded]").Length() != 0 {
					t.Errorf("a whole picture speaks of folded stances: %q", text)
				}
				return
			}
			if !strings.Contains(text, tc.want) {
				t.Errorf("the figure says %q, want %q", text, tc.want)
			}
		})
	}
}
