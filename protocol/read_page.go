package protocol

import (
	"context"
	"encoding/json"

	"github.com/parleyforum/parley/storage"
)

// § 7, § 12: one read answer stays bounded. A thread at its limits (thread_max_messages
// messages, thread_max_claims claims, each with claim_max_stances stances of
// evidence_max_items items) is far larger than one answer may be (an MCP result is at most
// 8 MiB), so read_thread and claim_graph answer in pages: messages in order of creation, then
// claims in order of id, each with its stances in order of id, cut where the page's JSON
// would pass Options.ReadPageBytes (4 MiB). A page ends between two claims whenever the next
// claim fits a page of its own; only a claim larger than a page is cut between its stances,
// and the next page begins with the rest of it.

// DefaultReadPageBytes bounds the JSON of one page (Options.ReadPageBytes): its messages,
// claims and stances, or graph nodes and edges. A page ends before the message, claim or
// stance that would pass it, except that an empty page takes its first (a message, or a
// claim's head with one stance, each far smaller than a page at the reference limits).
const DefaultReadPageBytes = 4 << 20

// claimPosition is where a page of claims begins: at claim, after its stance afterStance
// (0: the claim from its start).
type claimPosition struct{ claim, afterStance int64 }

// The cursors of pages carry where the next page begins, then the point every page is read
// as of (asof.go). The cursors of earlier forms (r1 without a point, g1 with one without its
// message) are refused as cursors this server did not give: the read begins again.
const (
	threadPageCursorTag = "r2" // read_thread: 0 and a message, or 1, a claim and a stance; then the point
	graphPageCursorTag  = "g2" // claim_graph: thread (0: all), claim, stance; then the point
)

// badCursor is the refusal of a cursor the server did not give for this read.
func badCursor() *Error {
	return Refuse(ReasonInvalidBody, "field cursor is not a cursor this server gave for it")
}

// pageRoom is what one page may still carry, in bytes of JSON, of a page of size bytes.
type pageRoom struct {
	left, size int
	empty      bool // nothing carried yet: the next unit goes in whatever its size
}

// newPageRoom is an empty page of size bytes.
func newPageRoom(size int) *pageRoom { return &pageRoom{left: size, size: size, empty: true} }

// take carries n bytes if they fit, or if the page is still empty.
func (p *pageRoom) take(n int) bool {
	if !p.empty && n > p.left {
		return false
	}
	p.left -= n
	p.empty = false
	return true
}

// claimUnits are the sizes in JSON of one claim as a page carries it: its head (the claim
// without its stances; 0 when the page does not repeat it) and each of its stances, in the
// order of the stances.
type claimUnits struct {
	head    int
	stances []int
}

// carried is one claim on a page: its stances (all of them, in order of id) and the part
// stances[from:to] the page carries; continued when an earlier page carried its head.
type carried struct {
	claim     *storage.Claim
	stances   []storage.Stance
	from, to  int
	continued bool
}

// pageClaims fills a page from claims (in order of id) beginning at pos: for each claim it
// reads its stances, asks measure for the sizes, and carries it whole when it fits; a claim
// that does not fit ends the page before it, unless it would not fit a page of its own
// either, when the page carries its head and as many stances as fit. It answers the claims
// carried and where the next page begins (nil: nothing is left).
func pageClaims(ctx context.Context, read *storage.Forum, claims []storage.Claim, pos claimPosition, room *pageRoom,
	measure func(c *storage.Claim, stances []storage.Stance, continued bool) (claimUnits, error)) ([]carried, *claimPosition, error) {
	var out []carried
	read16 := map[int64][]storage.Stance{}
	for i := range claims {
		c := &claims[i]
		if c.ID < pos.claim {
			continue
		}
		if _, ok := read16[c.ID]; !ok {
			var err error
			if read16, err = stancesOfNext(ctx, read, claims[i:min(i+stanceBatch, len(claims))]); err != nil {
				return nil, nil, err
			}
		}
		stances := read16[c.ID]
		continued := c.ID == pos.claim && pos.afterStance > 0
		from := 0
		for continued && from < len(stances) && stances[from].ID <= pos.afterStance {
			from++
		}
		u, err := measure(c, stances, continued)
		if err != nil {
			return nil, nil, err
		}
		whole := u.head
		for _, n := range u.stances[from:] {
			whole += n
		}
		if whole <= room.left {
			room.take(whole)
			out = append(out, carried{claim: c, stances: stances, from: from, to: len(stances), continued: continued})
			continue
		}
		// It does not fit what is left. A claim that fits a page of its own begins the next
		// page; a larger one (or one that comes first on a page and does not fit it) is cut
		// between its stances, its head with at least one.
		first := u.head
		if from < len(stances) {
			first += u.stances[from]
		}
		if (whole <= room.size && !room.empty) || !room.take(first) {
			next := claimPosition{claim: c.ID}
			if continued {
				next.afterStance = pos.afterStance
			}
			return out, &next, nil
		}
		to := min(from+1, len(stances))
		for to < len(stances) && room.take(u.stances[to]) {
			to++
		}
		out = append(out, carried{claim: c, stances: stances, from: from, to: to, continued: continued})
		if to < len(stances) {
			return out, &claimPosition{claim: c.ID, afterStance: stances[to-1].ID}, nil
		}
	}
	return out, nil, nil
}

// stanceBatch is how many claims' stances one query reads: a few queries a page, and at most
// that many claims' stances in memory at once.
const stanceBatch = 16

// stancesOfNext reads the stances of claims, by claim, each claim's in order of id; every
// claim has an entry, empty when it has no stance.
func stancesOfNext(ctx context.Context, read *storage.Forum, claims []storage.Claim) (map[int64][]storage.Stance, error) {
	ids := make([]int64, len(claims))
	byClaim := make(map[int64][]storage.Stance, len(claims))
	for i, c := range claims {
		ids[i] = c.ID
		byClaim[c.ID] = nil
	}
	stances, err := read.StancesOf(ctx, ids)
	if err != nil {
		return nil, err
	}
	for _, st := range stances {
		byClaim[st.ClaimID] = append(byClaim[st.ClaimID], st)
	}
	return byClaim, nil
}

// jsonSize is the length of v's JSON as an answer carries it, and a comma.
func jsonSize(v any) (int, error) {
	data, err := json.Marshal(v)
	return len(data) + 1, err
}

// kept is which of a carried claim's stances a page carries, by stance key.
func (c *carried) kept() map[string]bool {
	keys := make(map[string]bool, c.to-c.from)
	for i := c.from; i < c.to; i++ {
		keys[stanceKey(&c.stances[i])] = true
	}
	return keys
}

// only keeps the stances of list that keys names, in their order.
func only(list []*StanceView, keys map[string]bool) []*StanceView {
	out := []*StanceView{}
	for _, st := range list {
		if keys[st.ID] {
			out = append(out, st)
		}
	}
	return out
}
