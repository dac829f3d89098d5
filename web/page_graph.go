package web

import (
	"context"
	"errors"
	"regexp"
	"strconv"

	"github.com/gofiber/fiber/v2"

	"github.com/parleyforum/parley/graph"
	"github.com/parleyforum/parley/protocol"
	"github.com/parleyforum/parley/protocol/admission"
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
		drawn, folded, fits := g.Fit(graph.DrawingBound)
		gp.Folded, gp.Unfit = folded, !fits
		if fits {
			if gp.SVG, err = p.draw(r, drawn); err != nil {
				return p.refusedDrawing(r, err)
			}
		}
	}
	return r.render(fiber.StatusOK, views.GraphPageView(gp))
}

// draw lays g out for the page as heavy work (§ 19): admitted through the Drawing class,
// counted against the reader (holder), drawn in a process of its own that is killed at the
// request's deadline, so that one large drawing neither holds the others up nor outlives
// its request.
func (p *pages) draw(r *pageRequest, g *graph.Graph) ([]byte, error) {
	ctx := r.c.UserContext()
	release, err := p.svc.Admit(ctx, admission.Drawing, r.holder())
	if err != nil {
		return nil, err
	}
	defer release()
	return p.renderer.RenderSVG(ctx, g, graph.Drawing{Lang: r.page.Tr.Lang(), Link: nodeLink})
}

// refusedDrawing answers a drawing that was not made: every drawing slot busy (503), the
// reader's share of heavy work taken (429), or the deadline passed while it was drawn (503,
// its process killed); each with Retry-After and the reason in the reader's language.
func (p *pages) refusedDrawing(r *pageRequest, err error) error {
	refusal, _ := protocol.AsError(err)
	switch {
	case errors.Is(err, graph.ErrAbandoned) || errors.Is(err, context.DeadlineExceeded):
		return r.message(fiber.StatusServiceUnavailable, "page.unavailable", "graph.draw_abandoned")
	case refusal != nil && refusal.Reason == protocol.ReasonRateLimited:
		r.c.Set(fiber.HeaderRetryAfter, strconv.Itoa(refusal.RetryAfter))
		return r.message(fiber.StatusTooManyRequests, "page.unavailable", "graph.draw_yours")
	case refusal != nil && refusal.Reason == protocol.ReasonUnavailable:
		return r.message(fiber.StatusServiceUnavailable, "page.unavailable", "graph.draw_busy")
	}
	return err
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

// maxDrawnClaims bounds the claims the page lays out: a picture of more is read by nobody.
// A larger graph is listed and offered for download, and the filters narrow it. What is
// drawn is bounded by nodes and edges too (graph.DrawingBound): beyond it the stances are
// folded into counts on their claims.
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
