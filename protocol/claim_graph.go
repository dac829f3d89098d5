package protocol

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"

	"github.com/parleyforum/parley/graph"
	"github.com/parleyforum/parley/storage"
)

// § 12 graph: the claim graph of one thread or of the whole forum, in the format asked for.

// GraphResult is the graph in one format. In JSON (the default) it is the graph itself,
// {nodes, edges}; in the other formats it is {format, media_type, content} with the document
// as text, which HTTP sends as the document itself (Document).
//
// The JSON graph comes in pages (read_page.go): while NextCursor is given, the graph goes on
// on the page that cursor reads, whose nodes and edges follow these (an edge may name a node
// of an earlier page). A document is the whole graph in one page, or refused.
type GraphResult struct {
	Format     graph.Format
	Graph      *graph.Graph
	NextCursor *string
	// AsOf is the point of the record every page of this JSON read answers as of (§ 15).
	AsOf *AsOf
}

// MarshalJSON writes the graph, or the document in its envelope.
func (r *GraphResult) MarshalJSON() ([]byte, error) {
	if r.Format.Name == "json" {
		return json.Marshal(struct {
			*graph.Graph
			NextCursor *string `json:"next_cursor,omitempty"`
			AsOf       *AsOf   `json:"as_of,omitempty"`
		}{r.Graph, r.NextCursor, r.AsOf})
	}
	// A document is the whole graph in one answer, as HTTP sends it: it has no later page
	// to be read as of its point, and says none.
	media, doc, _ := r.Document()
	return json.Marshal(struct {
		Format    string `json:"format"`
		MediaType string `json:"media_type"`
		Content   string `json:"content"`
	}{r.Format.Name, media, string(doc)})
}

// Document is the graph as a document of its format, with its media type.
func (r *GraphResult) Document() (string, []byte, error) {
	var buf bytes.Buffer
	err := r.Format.Write(&buf, r.Graph)
	return r.Format.MediaType, buf.Bytes(), err
}

// Graph answers {thread?, room?, format?, cursor?}: one page of the claim graph.
func (s *Service) Graph(ctx context.Context, a *Actor, raw []byte) (*GraphResult, error) {
	o, err := input(a, raw)
	if err != nil {
		return nil, err
	}
	threadID, _, err := o.id("thread", "th_")
	if err != nil {
		return nil, err
	}
	room, _, err := o.room("room")
	if err != nil {
		return nil, err
	}
	name, hasFormat, err := o.str("format")
	if err != nil {
		return nil, err
	}
	if !hasFormat {
		name = "json"
	}
	format, ok := graph.FormatByName(name)
	if !ok {
		return nil, Refuse(ReasonInvalidBody, "field format must be one of %s", strings.Join(graph.FormatNames(), ", "))
	}
	list := ListOf(a, "graph", "thread", threadID, "room", roomFilter(room))
	pos, carried, err := s.graphCursorField(o, list, threadID)
	if err != nil {
		return nil, err
	}
	if pos == nil {
		pos = &claimPosition{}
	}
	if err := o.rest(); err != nil {
		return nil, err
	}
	if err := requireActor(a, RightRead); err != nil {
		return nil, err
	}
	scope, err2 := s.roomScope(ctx, a, room)
	if err2 != nil {
		return nil, err2
	}
	// A document must be whole, and its markup may take several times the bytes of the
	// JSON it is made of: it gets an eighth of a page.
	fill := newPageRoom(s.readPage)
	if format.Name != "json" {
		fill = newPageRoom(s.readPage / 8)
	}
	var g *graph.Graph
	var next *claimPosition
	var point *storage.Point
	err2 = s.db.Snapshot(ctx, func(ctx context.Context, read *storage.Forum) error {
		read = read.In(scope)
		// The first page fixes the point that the pages after it are read as of (§ 15).
		first := carried == nil
		var err error
		if point, err = beginAsOf(ctx, read, carried); err != nil {
			return err
		}
		if g, next, err = s.graphPage(ctx, read, threadID, *pos, fill, point.At); err != nil || !first || next == nil {
			return err
		}
		return read.PinPoint(ctx, point)
	})
	if err2 != nil {
		return nil, fault(err2)
	}
	if format.Name != "json" && (next != nil || fill.left < 0) {
		return nil, Refuse(ReasonLimitExceeded, "the graph is too large for one %s document; read it as json, a page at a time with next_cursor, or export it (GET /v1/export?format=%s)", format.Name, format.Name)
	}
	res := &GraphResult{Format: format, Graph: g, AsOf: asOfView(point)}
	if res.NextCursor, err = s.graphCursor(list, threadID, next, point); err != nil {
		return nil, err
	}
	return res, nil
}

// ClaimGraph builds the claim graph of a thread (0: of the whole forum, or of the rooms of
// scope), grounded labels set; only what scope reaches (ScopeOf). It reads one snapshot of
// the database (§ 15): every node's edges agree.
func (s *Service) ClaimGraph(ctx context.Context, scope storage.Scope, threadID int64) (*graph.Graph, error) {
	var g *graph.Graph
	err := s.db.Snapshot(ctx, func(ctx context.Context, read *storage.Forum) error {
		var err error
		g, err = s.claimGraphIn(ctx, read.In(scope), threadID)
		return err
	})
	if err != nil {
		return nil, fault(err)
	}
	return g, nil
}

// claimGraphIn is ClaimGraph with the queries of read (scoped already).
func (s *Service) claimGraphIn(ctx context.Context, read *storage.Forum, threadID int64) (*graph.Graph, error) {
	var claims []storage.Claim
	var err error
	if threadID != 0 {
		if _, err := read.Thread(ctx, threadID); err != nil {
			return nil, fault(notFound(err, "thread %s not found", ThreadKey(threadID)))
		}
		claims, err = read.ClaimsOf(ctx, threadID)
	} else {
		claims, err = read.ClaimsOf(ctx)
	}
	if err != nil {
		return nil, fault(err)
	}
	ids := make([]int64, len(claims))
	anchorIDs := make([]int64, 0, len(claims))
	seen := map[int64]bool{}
	for i, c := range claims {
		ids[i] = c.ID
		if !seen[c.AnchorID] {
			seen[c.AnchorID] = true
			anchorIDs = append(anchorIDs, c.AnchorID)
		}
	}
	stances, err := read.StancesOf(ctx, ids)
	if err != nil {
		return nil, fault(err)
	}
	anchors, err := read.MessagesByID(ctx, anchorIDs)
	if err != nil {
		return nil, fault(err)
	}
	return buildGraph(claimViews(claims, stances, supersedesOf(claims), s.limits.VerifyQuorum, storage.Now()), anchors), nil
}

// buildGraph lays the claims out as § 12 says: claims and their anchor messages,
// attestations, refutations and verifications as nodes; supports, refutes, verifies,
// supersedes and anchored_in as edges.
func buildGraph(claims []*ClaimView, anchors []storage.Message) *graph.Graph {
	g := &graph.Graph{Nodes: []*graph.Node{}, Edges: []*graph.Edge{}}
	for i := range anchors {
		g.Nodes = append(g.Nodes, anchorNode(&anchors[i]))
	}
	for _, c := range claims {
		node, edges := claimNode(c)
		g.Nodes, g.Edges = append(g.Nodes, node), append(g.Edges, edges...)
		eachStanceNode(c, func(n *graph.Node, e *graph.Edge) {
			g.Nodes, g.Edges = append(g.Nodes, n), append(g.Edges, e)
		})
	}
	g.LabelGrounded()
	return g
}

// anchorNode is a claim's anchor message as every token reads it: a hidden one without its
// body and provenance (§ 18), in the graph and so in every export.
func anchorNode(anchor *storage.Message) *graph.Node {
	m := messageView(anchor)
	return &graph.Node{ID: m.ID, Type: graph.TypeMessage, Thread: m.Thread,
		By: m.From.Identity, Kind: string(m.Kind), Text: m.Body, At: m.CreatedAt, Provenance: graphProvenance(m.Provenance)}
}

// claimNode is a claim's node with its edges anchored_in and supersedes.
func claimNode(c *ClaimView) (*graph.Node, []*graph.Edge) {
	expired := c.Expired
	n := &graph.Node{ID: c.ID, Type: graph.TypeClaim, Thread: c.Thread, Statement: c.Statement,
		State: string(c.State), Certainty: c.Certainty, Expired: &expired, AssertedBy: c.AssertedBy.Identity,
		Evidence: graphEvidence(c.Evidence), At: c.CreatedAt, Provenance: graphProvenance(c.Provenance)}
	if c.Origin != nil {
		n.Origin = &graph.Origin{Realm: c.Origin.Realm, Claim: c.Origin.Claim, Thread: c.Origin.Thread}
	}
	edges := []*graph.Edge{{From: c.ID, To: c.Anchor, Kind: graph.EdgeAnchoredIn}}
	for _, old := range c.Supersedes {
		edges = append(edges, &graph.Edge{From: c.ID, To: old, Kind: graph.EdgeSupersedes})
	}
	return n, edges
}

// eachStanceNode gives each stance of c as a node with its edge to c: attestations, then
// refutations, then verifications.
func eachStanceNode(c *ClaimView, add func(*graph.Node, *graph.Edge)) {
	for _, group := range []struct {
		stances   []*StanceView
		typ, edge string
	}{
		{c.Attestations, graph.TypeAttestation, graph.EdgeSupports},
		{c.Refutations, graph.TypeRefutation, graph.EdgeRefutes},
		{c.Verifications, graph.TypeVerification, graph.EdgeVerifies},
	} {
		for _, st := range group.stances {
			text := ""
			if st.Body != nil {
				text = *st.Body
			} else if st.Note != nil {
				text = *st.Note
			}
			add(&graph.Node{ID: st.ID, Type: group.typ, Thread: c.Thread, By: st.By.Identity,
				Text: text, Evidence: graphEvidence(st.Evidence), At: st.At, Signature: st.Signature, Document: st.Document,
				Provenance: graphProvenance(st.Provenance)}, &graph.Edge{From: st.ID, To: c.ID, Kind: group.edge})
		}
	}
}

// GroundedLabels are the grounded labels of claims read already (read_thread's), by claim
// id: the same framework the graph is labelled by, built from the claims alone, since their
// anchor messages are no arguments.
func GroundedLabels(claims []*ClaimView) map[string]string {
	labels := make(map[string]string, len(claims))
	for _, n := range buildGraph(claims, nil).Nodes {
		if n.Type == graph.TypeClaim {
			labels[n.ID] = string(n.Grounded)
		}
	}
	return labels
}

func graphEvidence(items []Evidence) []graph.Evidence {
	out := make([]graph.Evidence, len(items))
	for i, e := range items {
		out[i] = graph.Evidence{Kind: e.Kind, Ref: e.Ref, Note: e.Note}
	}
	return out
}

// IsDocument reports whether the graph goes out as a document of its own format (all but
// the native JSON).
func (r *GraphResult) IsDocument() bool { return r.Format.Name != "json" }

// graphProvenance is an author's provenance as the graph formats carry it (§ 15).
func graphProvenance(p *Provenance) *graph.Provenance {
	if p == nil {
		return nil
	}
	return &graph.Provenance{Model: p.Model, Client: p.Client}
}
