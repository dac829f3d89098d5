package protocol

import (
	"cmp"
	"context"
	"slices"
	"strings"
	"time"

	"github.com/parleyforum/parley/graph"
	"github.com/parleyforum/parley/storage"
)

// § 12 graph, a page at a time (read_page.go): the nodes and edges of the claims room takes
// from pos, each claim's anchor message with the first claim anchored in it, and the grounded
// labels of the whole graph, not of the page.
//
// § 15, paged reads are read as of one point (asof.go): the first page is read in a
// snapshot whose point its cursor carries, and every later page answers as of that point —
// the claims and stances it held, each claim in the state it was in then, expiry read against
// its time — so that a graph read in pages while claims are superseded and refuted is one
// graph. Every page says its point (as_of).

// graphCursor is the cursor of the graph's page that begins at pos, read as of p: the
// thread (0: all), the position, then the point.
func (s *Service) graphCursor(list CursorList, thread int64, pos *claimPosition, p *storage.Point) (*string, *Error) {
	if pos == nil {
		return nil, nil
	}
	c, err := s.pointCursor(graphPageCursorTag, list, []int64{thread, pos.claim, pos.afterStance}, p)
	if err != nil {
		return nil, err
	}
	return &c, nil
}

// graphCursorField reads the cursor of a graph read of thread: where its page begins and the
// point it is read as of; nil, nil when there is none. A cursor of another thread's graph
// (or of the whole forum's for a thread's) is one of another list.
func (s *Service) graphCursorField(o *object, list CursorList, thread int64) (*claimPosition, *storage.Point, *Error) {
	n, p, err := s.pointCursorField(o, graphPageCursorTag, list, 3)
	if err != nil || n == nil {
		return nil, nil, err
	}
	if n[0] != thread {
		return nil, nil, badCursor()
	}
	return &claimPosition{claim: n[1], afterStance: n[2]}, p, nil
}

// graphPage reads one page of the claim graph of a thread (0: of every thread read reaches),
// with each claim's expiry read against now.
func (s *Service) graphPage(ctx context.Context, read *storage.Forum, threadID int64, pos claimPosition, room *pageRoom, now time.Time) (*graph.Graph, *claimPosition, error) {
	var threads []int64
	if threadID != 0 {
		if _, err := read.Thread(ctx, threadID); err != nil {
			return nil, nil, fault(notFound(err, "thread %s not found", ThreadKey(threadID)))
		}
		threads = []int64{threadID}
	}
	claims, err := read.ClaimsOf(ctx, threads...)
	if err != nil {
		return nil, nil, err
	}
	refuted, err := read.RefutedClaimsOf(ctx, threads...)
	if err != nil {
		return nil, nil, err
	}
	labels := groundedOf(claims, refuted)
	// label gives a node its label of the whole graph, before it is measured: a refutation,
	// which nothing attacks, is in.
	label := func(n *graph.Node) *graph.Node {
		if n.Type == graph.TypeRefutation {
			n.Grounded = graph.In
		} else if l, ok := labels[n.ID]; ok {
			n.Grounded = l
		}
		return n
	}
	firstAnchored := map[int64]int64{} // anchor message → the first claim anchored in it
	for _, c := range claims {
		if _, ok := firstAnchored[c.AnchorID]; !ok {
			firstAnchored[c.AnchorID] = c.ID
		}
	}
	supersedes := supersedesOf(claims)
	type laid struct {
		view     *ClaimView
		anchor   *graph.Node // when this claim is the first anchored in it
		anchorID int64
	}
	lay := map[int64]*laid{}
	page, next, err := pageClaims(ctx, read, claims, pos, room, func(c *storage.Claim, stances []storage.Stance, continued bool) (claimUnits, error) {
		l := &laid{view: claimViews([]storage.Claim{*c}, stances, supersedes, s.limits.VerifyQuorum, now)[0], anchorID: c.AnchorID}
		lay[c.ID] = l
		u := claimUnits{stances: make([]int, len(stances))}
		sizes := map[string]int{}
		var failed error
		eachStanceNode(l.view, func(n *graph.Node, e *graph.Edge) {
			a, err := jsonSize(label(n))
			b, err2 := jsonSize(e)
			sizes[n.ID], failed = a+b, firstErr(failed, err, err2)
		})
		for i := range stances {
			u.stances[i] = sizes[stanceKey(&stances[i])]
		}
		if continued {
			return u, failed
		}
		node, edges := claimNode(l.view)
		parts := []any{label(node)}
		for _, e := range edges {
			parts = append(parts, e)
		}
		if firstAnchored[c.AnchorID] == c.ID {
			anchors, err := read.MessagesByID(ctx, []int64{c.AnchorID})
			if err != nil {
				return u, err
			}
			if len(anchors) == 1 {
				l.anchor = anchorNode(&anchors[0])
				parts = append(parts, l.anchor)
			}
		}
		for _, p := range parts {
			n, err := jsonSize(p)
			u.head, failed = u.head+n, firstErr(failed, err)
		}
		return u, failed
	})
	if err != nil {
		return nil, nil, err
	}
	g := &graph.Graph{Nodes: []*graph.Node{}, Edges: []*graph.Edge{}}
	var rest []*graph.Node
	var anchors []*laid
	for i := range page {
		l, keep := lay[page[i].claim.ID], page[i].kept()
		if !page[i].continued {
			node, edges := claimNode(l.view)
			label(node)
			rest, g.Edges = append(rest, node), append(g.Edges, edges...)
			if l.anchor != nil {
				anchors = append(anchors, l)
			}
		}
		eachStanceNode(l.view, func(n *graph.Node, e *graph.Edge) {
			if !keep[label(n).ID] {
				return
			}
			rest, g.Edges = append(rest, n), append(g.Edges, e)
		})
	}
	// The anchors first, in order of id, as in a graph read whole.
	slices.SortFunc(anchors, func(a, b *laid) int { return cmp.Compare(a.anchorID, b.anchorID) })
	for _, l := range anchors {
		g.Nodes = append(g.Nodes, l.anchor)
	}
	g.Nodes = append(g.Nodes, rest...)
	return g, next, nil
}

// groundedOf labels the claims as the whole graph of claims labels them (graph.Grounded):
// a refutation, which nothing attacks, attacks the claim it refutes, and a newer claim each
// claim it superseded among them. One refutation of a claim stands for all of them.
func groundedOf(claims []storage.Claim, refuted []int64) map[string]graph.Label {
	args := make([]string, 0, len(claims)+len(refuted))
	var attacks []graph.Attack
	in := make(map[int64]bool, len(claims))
	for _, c := range claims {
		args, in[c.ID] = append(args, ClaimKey(c.ID)), true
	}
	for _, c := range claims {
		if c.SupersededBy != nil && in[*c.SupersededBy] {
			attacks = append(attacks, graph.Attack{From: ClaimKey(*c.SupersededBy), To: ClaimKey(c.ID)})
		}
	}
	for _, id := range refuted {
		r := "refuted " + ClaimKey(id)
		args, attacks = append(args, r), append(attacks, graph.Attack{From: r, To: ClaimKey(id)})
	}
	return graph.Grounded(args, attacks)
}

// firstErr is the first error that is not nil.
func firstErr(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// GroundedLabelsOf are the grounded labels of every claim of a thread, by claim id, as its
// whole claim graph gives them: for a page that shows one page of its claims.
func (s *Service) GroundedLabelsOf(ctx context.Context, a *Actor, thread string) (map[string]string, error) {
	id, ok := ParseIDString(thread, "th_")
	if !ok {
		return nil, Refuse(ReasonInvalidBody, "field thread is not a thread id")
	}
	out := map[string]string{}
	err := s.db.Snapshot(ctx, func(ctx context.Context, read *storage.Forum) error {
		read = read.In(ScopeOf(a))
		claims, err := read.ClaimsOf(ctx, id)
		if err != nil {
			return err
		}
		refuted, err := read.RefutedClaimsOf(ctx, id)
		if err != nil {
			return err
		}
		for key, l := range groundedOf(claims, refuted) {
			if strings.HasPrefix(key, "cl_") {
				out[key] = string(l)
			}
		}
		return nil
	})
	if err != nil {
		return nil, fault(err)
	}
	return out, nil
}
