package web

import (
	"github.com/gofiber/fiber/v2"

	"github.com/parleyforum/parley/graph"
	"github.com/parleyforum/parley/protocol"
	"github.com/parleyforum/parley/views"
)

// The claim graph in the browser: GET /graph (the whole forum, or ?thread=), GET
// /threads/{id}/graph, and GET /graph/export?format=&thread= for the downloads. The graph is
// the operation layer's (the same as GET /v1/graph and claim_graph), read with the reader's
// actor; the page draws it as an inline SVG laid out on the server. The downloads are served
// here, for the reader's session, since /v1 answers bearer tokens only.

// graphPage is GET /graph.
func (p *pages) graphPage(r *pageRequest) error {
	thread := r.c.Query("thread")
	if thread != "" {
		if m := threadKey.FindStringSubmatch(thread); m != nil {
			thread = "th_" + m[1]
		} else {
			return r.notFound()
		}
	}
	return p.renderGraph(r, thread)
}

// threadGraphPage is GET /threads/{id}/graph.
func (p *pages) threadGraphPage(r *pageRequest) error {
	id, ok := threadParam(r)
	if !ok {
		return r.notFound()
	}
	return p.renderGraph(r, id)
}

// renderGraph draws the graph of thread ("" for the forum) with the claims in the state of
// ?state= (and what was said about them), or every claim.
func (p *pages) renderGraph(r *pageRequest, thread string) error {
	state := r.c.Query("state")
	if state != "" && !protocol.IsClaimState(protocol.ClaimState(state)) {
		state = ""
	}
	res, err := p.svc.Graph(r.c.UserContext(), r.actor(), graphInput(thread, ""))
	if err != nil {
		return p.refusedRead(r, err)
	}
	g := res.Graph
	if state != "" {
		g = g.Only(state) // the claims in state with their stances and anchors
	}
	gp := views.GraphPage{Thread: thread, State: state, Graph: g, DrawLimit: maxDrawnClaims}
	if n := claimCount(g); n > 0 && n <= maxDrawnClaims {
		if gp.SVG, err = graph.RenderSVG(r.c.UserContext(), g); err != nil {
			return err
		}
	}
	return r.render(fiber.StatusOK, views.GraphPageView(gp))
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
