package protocol

import (
	"cmp"
	"context"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/parleyforum/parley/graph"
	"github.com/parleyforum/parley/storage"
)

// § 12 graph, a page at a time (read_page.go): the nodes and edges of the claims room takes
// from pos, each claim's anchor message with the first claim anchored in it, and the grounded
// labels of the whole graph, not of the page.
//
// § 15, paged reads are read as of one point: the first page is read in a snapshot whose
// point (storage.Point) its cursor carries, and every later page answers as of that point —
// the claims and stances it held, each claim in the state it was in then, expiry read against
// its time — so that a graph read in pages while claims are superseded and refuted is one
// graph. Every page says its point (as_of).

// AsOf is the point of the record a paged read answers as of: the last event and stance the
// first page's snapshot held (null when there was none), and the snapshot's time.
type AsOf struct {
	Event  *string   `json:"event"`
	Stance *string   `json:"stance"`
	At     time.Time `json:"at"`
}

// asOfView is the point as a page says it.
func asOfView(p *storage.Point) *AsOf {
	v := &AsOf{At: p.At}
	if p.Event > 0 {
		e := EventKey(p.Event)
		v.Event = &e
	}
	if p.Stance > 0 {
		st := StanceKey(p.StanceKind, p.Stance)
		v.Stance = &st
	}
	return v
}

// stanceKindCodes number the stance kinds for a cursor (0: no stance).
var stanceKindCodes = []string{"", storage.StanceAttest, storage.StanceRefute, storage.StanceVerify}

// graphCursor is the cursor of the graph's page that begins at pos, read as of p: the
// thread (0: all), the position, then the point — its event, stance, stance kind and claim,
// its time in microseconds, and on Postgres the snapshot's xmax and running transactions.
func (s *Service) graphCursor(list CursorList, thread int64, pos *claimPosition, p *storage.Point) (*string, *Error) {
	if pos == nil {
		return nil, nil
	}
	nums := []int64{thread, pos.claim, pos.afterStance, p.Event, p.Stance, int64(slices.Index(stanceKindCodes, p.StanceKind)),
		p.Claim, p.At.UnixMicro(), p.XMax}
	c, err := s.encodeCursor(graphPageCursorTag, list, append(nums, p.Running...)...)
	if err != nil {
		return nil, err
	}
	return &c, nil
}

// graphCursorFixed is how many numbers a graph cursor has before the running transactions.
const graphCursorFixed = 9

// graphCursorField reads the cursor of a graph read of thread: where its page begins and the
// point it is read as of; nil, nil when there is none. A cursor of another thread's graph
// (or of the whole forum's for a thread's) is one of another list.
func (s *Service) graphCursorField(o *object, list CursorList, thread int64) (*claimPosition, *storage.Point, *Error) {
	cursor, has, err := o.str("cursor")
	if err != nil || !has {
		return nil, nil, err
	}
	raw, err := s.OpenCursor(list, "cursor", cursor, badCursor())
	if err != nil {
		return nil, nil, err
	}
	parts := strings.Split(string(raw), ".")
	if len(parts) < graphCursorFixed+1 || parts[0] != graphPageCursorTag {
		return nil, nil, badCursor()
	}
	n := make([]int64, len(parts)-1)
	for i, part := range parts[1:] {
		v, perr := strconv.ParseInt(part, 10, 64)
		if perr != nil || strconv.FormatInt(v, 10) != part || v < 0 {
			return nil, nil, badCursor()
		}
		n[i] = v
	}
	if n[0] != thread || n[5] < 0 || n[5] >= int64(len(stanceKindCodes)) {
		return nil, nil, badCursor()
	}
	p := &storage.Point{Event: n[3], Stance: n[4], StanceKind: stanceKindCodes[n[5]], Claim: n[6],
		At: time.UnixMicro(n[7]).UTC(), XMax: n[8], Running: n[graphCursorFixed:]}
	if len(p.Running) == 0 {
		p.Running = nil
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
