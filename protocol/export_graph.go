package protocol

import (
	"context"
	"time"

	"github.com/parleyforum/parley/graph"
	"github.com/parleyforum/parley/storage"
)

// § 19, answers are streamed: an export's claim graph is read from its snapshot a page at a
// time, as often as its format passes over it, never whole. The nodes come in the order
// buildGraph lays them out — the anchor messages by id, then each claim by id followed by its
// attestations, refutations and verifications — and the edges in the same order. Each claim's
// grounded label is its thread's: attacks (refutations, supersessions) never cross a thread,
// and a thread holds at most thread_max_claims claims.

// exportClaimPage is how many claims one read of an export gives; their stances are read
// stanceBatch claims at a time, so that memory holds at most that many claims' stances.
const exportClaimPage = 64

// exportGraph is the claim graph of a thread (0: of every thread read reaches) in a snapshot.
type exportGraph struct {
	ctx      context.Context
	read     *storage.Forum
	threadID int64
	quorum   int
	now      time.Time // one time for every pass, so that each says the same of expiry
}

// exportGraphOf is the graph of threadID in read, as of now.
func (s *Service) exportGraphOf(ctx context.Context, read *storage.Forum, threadID int64, now time.Time) *exportGraph {
	return &exportGraph{ctx: ctx, read: read, threadID: threadID, quorum: s.limits.VerifyQuorum, now: now}
}

// EachNode gives the anchor messages, then each claim and its stances.
func (x *exportGraph) EachNode(fn func(*graph.Node) error) error {
	err := pages(x.ctx, x.threadID, x.read.AnchorsAfter, func(m *storage.Message) int64 { return m.ID }, func(page []storage.Message) error {
		for i := range page {
			if err := fn(anchorNode(&page[i])); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	return x.eachClaim(true, func(v *ClaimView, label graph.Label) error {
		node, _ := claimNode(v)
		node.Grounded = label
		if err := fn(node); err != nil {
			return err
		}
		return eachLabelledStance(v, func(n *graph.Node, _ *graph.Edge) error { return fn(n) })
	})
}

// EachEdge gives each claim's edges (anchored_in, supersedes), then its stances'.
func (x *exportGraph) EachEdge(fn func(e *graph.Edge, from, to *graph.Node) error) error {
	return x.eachClaim(true, func(v *ClaimView, label graph.Label) error {
		node, edges := claimNode(v)
		node.Grounded = label
		for _, e := range edges {
			if err := fn(e, node, nil); err != nil {
				return err
			}
		}
		return eachLabelledStance(v, func(n *graph.Node, e *graph.Edge) error { return fn(e, n, node) })
	})
}

// eachLabelledStance is eachStanceNode with the refutations labelled in (nothing attacks
// them), stopping at the first error.
func eachLabelledStance(v *ClaimView, fn func(*graph.Node, *graph.Edge) error) error {
	var err error
	eachStanceNode(v, func(n *graph.Node, e *graph.Edge) {
		if err != nil {
			return
		}
		if n.Type == graph.TypeRefutation {
			n.Grounded = graph.In
		}
		err = fn(n, e)
	})
	return err
}

// eachClaim gives every claim of the graph by id, as claim_read reads it, with its grounded
// label when labelled.
func (x *exportGraph) eachClaim(labelled bool, fn func(*ClaimView, graph.Label) error) error {
	for after := int64(0); ; {
		page, err := x.read.ClaimsAfter(x.ctx, storage.DatasetPage{Thread: x.threadID, After: after, Limit: exportClaimPage})
		if err != nil {
			return err
		}
		if len(page) == 0 {
			return nil
		}
		var labels map[string]graph.Label
		if labelled {
			if labels, err = x.labelsOf(page); err != nil {
				return err
			}
		}
		ids := make([]int64, len(page))
		for i := range page {
			ids[i] = page[i].ID
		}
		supersedes, err := x.read.SupersededAmong(x.ctx, ids)
		if err != nil {
			return err
		}
		for start := 0; start < len(page); start += stanceBatch {
			batch := page[start:min(start+stanceBatch, len(page))]
			stances, err := stancesOfNext(x.ctx, x.read, batch)
			if err != nil {
				return err
			}
			for i := range batch {
				v := claimViews(batch[i:i+1], stances[batch[i].ID], supersedes, x.quorum, x.now)[0]
				if err := fn(v, labels[v.ID]); err != nil {
					return err
				}
			}
		}
		if len(page) < exportClaimPage {
			return nil
		}
		after = page[len(page)-1].ID
	}
}

// labelsOf labels the claims of page within their threads: what their threads' claims and
// refutations make of them (groundedOf).
func (x *exportGraph) labelsOf(page []storage.Claim) (map[string]graph.Label, error) {
	var threads []int64
	seen := map[int64]bool{}
	for i := range page {
		if !seen[page[i].ThreadID] {
			seen[page[i].ThreadID] = true
			threads = append(threads, page[i].ThreadID)
		}
	}
	links, err := x.read.ClaimLinksOf(x.ctx, threads...)
	if err != nil {
		return nil, err
	}
	refuted, err := x.read.RefutedClaimsOf(x.ctx, threads...)
	if err != nil {
		return nil, err
	}
	return groundedOf(links, refuted), nil
}

// notingSource passes a source on and shows note every node it gives (a stance with its
// document: the custody's keys are gathered so).
type notingSource struct {
	graph.Source
	note func(*graph.Node) error
}

func (n notingSource) EachNode(fn func(*graph.Node) error) error {
	return n.Source.EachNode(func(node *graph.Node) error {
		if err := n.note(node); err != nil {
			return err
		}
		return fn(node)
	})
}

func (n notingSource) EachEdge(fn func(e *graph.Edge, from, to *graph.Node) error) error {
	return n.Source.EachEdge(func(e *graph.Edge, from, to *graph.Node) error {
		if err := n.note(from); err != nil {
			return err
		}
		return fn(e, from, to)
	})
}
