package views

import (
	"fmt"
	"html"
	"net/url"
	"regexp"
	"strconv"
	"strings"

	"github.com/parleyforum/parley/graph"
	"github.com/parleyforum/parley/protocol"
)

// GraphPage is the data of GET /graph and /threads/{id}/graph: the claim graph laid out on
// the server as SVG, the filters it was drawn with, and the graph itself for the text
// alternative.
type GraphPage struct {
	Thread string // the thread filter, "" for the whole forum
	Claim  string // the claim whose neighbourhood is drawn, "" for every claim
	State  string // the claim state filter, "" for every state
	// ThreadInput and ClaimInput are the form's fields as typed; ThreadError and ClaimError
	// what is wrong with them, shown beside them. ThreadFixed: the thread is the address's
	// (/threads/{id}/graph), not the form's.
	ThreadInput, ClaimInput string
	ThreadError, ClaimError *FieldError
	ThreadFixed             bool
	View                    GraphView
	Graph                   *graph.Graph
	SVG                     []byte // Graphviz's <svg> element; empty when no claim matches, or too many
	// DrawLimit is the most claims the page draws; a larger graph is only listed.
	DrawLimit int
	// Folded is how many stances the picture leaves out, counted on their claims instead
	// (graph.Graph.Fit); Unfit: the graph holds more nodes or edges than a drawing may even
	// with every stance folded, and is only listed.
	Folded int
	Unfit  bool
}

// FieldError is a form field's refusal: a message id and the value it speaks of.
type FieldError struct{ ID, Value string }

// GraphView is the part of the picture shown: at Zoom 1 the whole picture, scaled down to
// the width of its box when it is wider; at Zoom z a z-th of its width and height, panned by X and Y half views
// from the top left. The page crops the SVG's viewBox to it, so that no script is needed.
type GraphView struct{ Zoom, X, Y int }

// zooms are the magnifications offered.
var zooms = []int{1, 2, 4, 8}

// IsZoom reports whether z is a magnification the page offers.
func IsZoom(z int) bool {
	for _, o := range zooms {
		if z == o {
			return true
		}
	}
	return false
}

// last is the largest pan, in half views, that keeps the view inside the picture.
func (v GraphView) last() int { return 2*v.Zoom - 2 }

// Held is v with its pan kept inside the picture.
func (v GraphView) Held() GraphView {
	v.X, v.Y = min(max(v.X, 0), v.last()), min(max(v.Y, 0), v.last())
	return v
}

// zoomed is the view at zoom z around the same centre.
func (v GraphView) zoomed(z int) GraphView {
	centre := func(p int) int { return (p + 1) * z / v.Zoom } // the centre in half views of the new zoom
	return GraphView{Zoom: z, X: centre(v.X) - 1, Y: centre(v.Y) - 1}.Held()
}

// viewURL is the address of this page with view, the filters kept.
func (g GraphPage) viewURL(v GraphView) string {
	q := url.Values{}
	path := "/graph"
	if g.ThreadFixed {
		path = "/threads/" + g.Thread + "/graph"
	} else if g.Thread != "" {
		q.Set("thread", g.Thread)
	}
	if g.Claim != "" {
		q.Set("claim", g.Claim)
	}
	if g.State != "" {
		q.Set("state", g.State)
	}
	if v.Zoom > 1 {
		q.Set("zoom", strconv.Itoa(v.Zoom))
		q.Set("x", strconv.Itoa(v.X))
		q.Set("y", strconv.Itoa(v.Y))
	}
	if len(q) > 0 {
		path += "?" + q.Encode()
	}
	return path + "#graph-picture"
}

// viewLink is one link of the zoom and pan controls.
type viewLink struct {
	Name, Label, Href string
}

// viewLinks are the zoom and pan links the view offers: fit, zoom out, zoom in, and a pan in
// each direction the picture goes on.
func (g GraphPage) viewLinks() []viewLink {
	v := g.View
	var out []viewLink
	add := func(name, label string, to GraphView) {
		out = append(out, viewLink{name, label, g.viewURL(to)})
	}
	if v.Zoom > 1 {
		add("fit", "graph.fit", GraphView{Zoom: 1})
		add("zoom-out", "graph.zoom_out", v.zoomed(v.Zoom/2))
	}
	if v.Zoom < zooms[len(zooms)-1] {
		add("zoom-in", "graph.zoom_in", v.zoomed(v.Zoom*2))
	}
	if v.X > 0 {
		add("pan-left", "graph.pan_left", GraphView{v.Zoom, v.X - 1, v.Y})
	}
	if v.X < v.last() {
		add("pan-right", "graph.pan_right", GraphView{v.Zoom, v.X + 1, v.Y})
	}
	if v.Y > 0 {
		add("pan-up", "graph.pan_up", GraphView{v.Zoom, v.X, v.Y - 1})
	}
	if v.Y < v.last() {
		add("pan-down", "graph.pan_down", GraphView{v.Zoom, v.X, v.Y + 1})
	}
	return out
}

// neighbourhoodURL is the address of claim's neighbourhood in this page's thread.
func (g GraphPage) neighbourhoodURL(claim string) string {
	q := url.Values{"claim": {claim}}
	if g.Thread != "" && !g.ThreadFixed {
		q.Set("thread", g.Thread)
	}
	path := "/graph"
	if g.ThreadFixed {
		path = "/threads/" + g.Thread + "/graph"
	}
	return path + "?" + q.Encode()
}

// wholeURL is the address of the graph this neighbourhood was taken from.
func (g GraphPage) wholeURL() string {
	return GraphPage{Thread: g.Thread, ThreadFixed: g.ThreadFixed, State: g.State}.viewURL(GraphView{Zoom: 1})
}

var (
	svgHeight  = regexp.MustCompile(`\sheight="[^"]*"`)
	svgViewBox = regexp.MustCompile(`viewBox="([-0-9.]+) ([-0-9.]+) ([0-9.]+) ([0-9.]+)"`)
)

// fitSVG is Graphviz's <svg> element made to fit the width of its box: its fixed height
// dropped, so that its viewBox gives the height, and its width (the picture's own, in points)
// kept as the most it is drawn at, which CSS caps at the box's width: a small graph is drawn
// at its size, a large one scaled down to the box. The viewBox is cropped to view, so that
// zoom z shows a z-th of the picture at the picture's own width.
func fitSVG(svg []byte, view GraphView) []byte {
	s := string(svg)
	end := strings.Index(s, ">")
	if !strings.HasPrefix(s, "<svg") || end < 0 {
		return svg
	}
	open := svgHeight.ReplaceAllString(s[:end], "")
	open = svgViewBox.ReplaceAllStringFunc(open, func(box string) string {
		m := svgViewBox.FindStringSubmatch(box)
		x, _ := strconv.ParseFloat(m[1], 64)
		y, _ := strconv.ParseFloat(m[2], 64)
		w, _ := strconv.ParseFloat(m[3], 64)
		h, _ := strconv.ParseFloat(m[4], 64)
		z := float64(view.Zoom)
		vw, vh := w/z, h/z
		return fmt.Sprintf(`viewBox="%.2f %.2f %.2f %.2f"`, x+float64(view.X)*vw/2, y+float64(view.Y)*vh/2, vw, vh)
	})
	return []byte(open + ` class="graph-svg" preserveAspectRatio="xMinYMin meet"` + s[end:])
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
