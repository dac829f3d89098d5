package web

import (
	"regexp"
	"strconv"

	"github.com/gofiber/fiber/v2"

	"github.com/parleyforum/parley/graph"
	"github.com/parleyforum/parley/protocol"
	"github.com/parleyforum/parley/views"
)

// The claim graph in the browser: GET /graph (the whole forum, or ?thread=, or one claim's
// neighbourhood with ?claim=), GET /threads/{id}/graph, and GET /graph/export?format=&thread=
// for the downloads. The graph is the operation layer's (the same as GET /v1/graph and
// claim_graph), read with the reader's actor; the page draws it as an inline SVG laid out on
// the server, in the reader's language, each node a link to its place in the thread, with
// zoom and pan as plain links (?zoom=&x=&y=). The downloads are served here, for the reader's
// session, since /v1 answers bearer tokens only.

// graphPage is GET /graph. The thread and claim come from the page's own form: a value that
// names no thread or claim is refused beside its field (400), with the form as it was typed.
func (p *pages) graphPage(r *pageRequest) error {
	gp := views.GraphPage{ThreadInput: r.c.Query("thread"), ClaimInput: r.c.Query("claim")}
	var ok bool
	if gp.Thread, ok = fieldKey(gp.ThreadInput, threadKey, "th_"); !ok {
		gp.ThreadError = &views.FieldError{ID: "graph.thread_invalid", Value: gp.ThreadInput}
	}
	if gp.Claim, ok = fieldKey(gp.ClaimInput, claimKey, "cl_"); !ok {
		gp.ClaimError = &views.FieldError{ID: "graph.claim_invalid", Value: gp.ClaimInput}
	}
	return p.renderGraph(r, gp)
}

// threadGraphPage is GET /threads/{id}/graph.
func (p *pages) threadGraphPage(r *pageRequest) error {
	id, ok := threadParam(r)
	if !ok {
		return r.notFound()
	}
	gp := views.GraphPage{Thread: id, ThreadInput: id, ClaimInput: r.c.Query("claim")}
	if gp.Claim, ok = fieldKey(gp.ClaimInput, claimKey, "cl_"); !ok {
		gp.ClaimError = &views.FieldError{ID: "graph.claim_invalid", Value: gp.ClaimInput}
	}
	gp.ThreadFixed = true
	return p.renderGraph(r, gp)
}

// fieldKey is the id a form field names ("" for an empty field), prefixed, and whether the
// field holds one.
func fieldKey(value string, key *regexp.Regexp, prefix string) (string, bool) {
	if value == "" {
		return "", true
	}
	if m := key.FindStringSubmatch(value); m != nil {
		return prefix + m[1], true
	}
	return "", false
}

// renderGraph draws the graph of gp's thread ("" for the forum), narrowed to gp's claim's
// neighbourhood and to the claims in the state of ?state= (with what was said about them).
func (p *pages) renderGraph(r *pageRequest, gp views.GraphPage) error {
	gp.State = r.c.Query("state")
	if gp.State != "" && !protocol.IsClaimState(protocol.ClaimState(gp.State)) {
		gp.State = ""
	}
	gp.View = graphView(r)
	gp.DrawLimit = maxDrawnClaims
	gp.Graph = &graph.Graph{}
	if gp.ThreadError != nil || gp.ClaimError != nil {
		return r.render(fiber.StatusBadRequest, views.GraphPageView(gp))
	}
	res, err := p.svc.Graph(r.c.UserContext(), r.actor(), graphInput(gp.Thread, ""))
	if refusal, ok := protocol.AsError(err); ok && refusal.Reason == protocol.ReasonNotFound && !gp.ThreadFixed {
		gp.ThreadError = &views.FieldError{ID: "graph.thread_unknown", Value: gp.Thread}
		return r.render(fiber.StatusBadRequest, views.GraphPageView(gp))
	}
	if err != nil {
		return p.refusedRead(r, err)
	}
	g := res.Graph
	if gp.Claim != "" {
		if g = g.Around(gp.Claim); len(g.Nodes) == 0 {
			gp.ClaimError = &views.FieldError{ID: "graph.claim_unknown", Value: gp.Claim}
			return r.render(fiber.StatusBadRequest, views.GraphPageView(gp))
		}
	}
	if gp.State != "" {
		g = g.Only(gp.State) // the claims in state with their stances and anchors
	}
	gp.Graph = g
	if n := claimCount(g); n > 0 && n <= maxDrawnClaims {
		drawing := graph.Drawing{Lang: r.page.Tr.Lang(), Link: nodeLink}
		if gp.SVG, err = graph.RenderSVG(r.c.UserContext(), g, drawing); err != nil {
			return err
		}
	}
	return r.render(fiber.StatusOK, views.GraphPageView(gp))
}

// nodeLink is a node's place in its thread's page: the claim's card, the stance in it, the
// message (each element carries the node's id).
func nodeLink(n *graph.Node) string { return "/threads/" + n.Thread + "#" + n.ID }

// graphView is the part of the picture the reader asked for: ?zoom= (1, 2, 4 or 8; anything
// else is the whole picture) and the pan ?x=, ?y= in half views, held within the picture.
func graphView(r *pageRequest) views.GraphView {
	v := views.GraphView{Zoom: 1}
	if z, err := strconv.Atoi(r.c.Query("zoom")); err == nil && views.IsZoom(z) {
		v.Zoom = z
	}
	v.X, v.Y = r.c.QueryInt("x"), r.c.QueryInt("y")
	return v.Held()
}

// maxDrawnClaims bounds the claims the page lays out: Graphviz takes about a second for 200
// claims with their stances, one graph at a time, and a picture of more is read by nobody.
// A larger graph is listed and offered for download, and the filters narrow it.
const maxDrawnClaims = 200

// graphExport is GET /graph/export?format=&thread=: the graph as a document to download.
func (p *pages) graphExport(r *pageRequest) error {
	thread := r.c.Query("thread")
	res, err := p.svc.Graph(r.c.UserContext(), r.actor(), graphInput(thread, r.c.Query("format")))
	if err != nil {
		return p.refusedRead(r, err)
	}
	media, doc, err := res.Document()
	if err != nil {
		return err
	}
	name := "parley-graph"
	if thread != "" {
		name += "-" + thread
	}
	r.c.Set(fiber.HeaderContentType, media+"; charset=utf-8")
	r.c.Set(fiber.HeaderContentDisposition, `attachment; filename="`+name+"."+res.Format.Extension+`"`)
	return r.c.Send(doc)
}

// graphInput is the graph operation's input: a thread ("" for the forum) and a format (""
// for the native JSON).
func graphInput(thread, format string) []byte {
	in := map[string]any{}
	if thread != "" {
		in["thread"] = thread
	}
	if format != "" {
		in["format"] = format
	}
	return jsonInput(in)
}

// claimCount counts the claims of g.
func claimCount(g *graph.Graph) int {
	n := 0
	for _, node := range g.Nodes {
		if node.Type == graph.TypeClaim {
			n++
		}
	}
	return n
}
