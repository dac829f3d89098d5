package protocol

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/parleyforum/parley/storage"
)

// § 15, paged reads are read as of one point: a read that comes in pages — the claim graph
// (claim_graph_page.go), a thread's messages and claims (read.go) — reads its first page in a
// snapshot and carries that snapshot's point (storage.Point) in its cursor; every later page
// is read as of it (storage.Forum.AsOf), so that what was written between two pages shows on
// neither, and each claim and the thread show the state they had then. Every page says its
// point (as_of). The point's machinery is here, once, for every paged read.

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

// beginAsOf begins a page's reads in read, the page's snapshot: a later page's (p, the point
// its cursor carried) answer as of p; a first page's (p nil) as of its snapshot, whose point
// it answers. The point of a first page that has a next page is completed by
// storage.Forum.PinPoint, in the same snapshot, before its cursor carries it.
func beginAsOf(ctx context.Context, read *storage.Forum, p *storage.Point) (*storage.Point, error) {
	if p != nil {
		read.AsOf(p)
		return p, nil
	}
	now, err := read.PointNow(ctx)
	if err != nil {
		return nil, err
	}
	return &now, nil
}

// stanceKindCodes number the stance kinds for a cursor (0: no stance).
var stanceKindCodes = []string{"", storage.StanceAttest, storage.StanceRefute, storage.StanceVerify}

// pointFixed is how many numbers a cursor's point has before the running transactions.
const pointFixed = 7

// pointCursor is the cursor of a page read as of p: tag, the page's own numbers (head: where
// it begins), then the point — its event, stance, stance kind, claim and message, its time in
// microseconds, and on Postgres the snapshot's xmax and running transactions.
func (s *Service) pointCursor(tag string, list CursorList, head []int64, p *storage.Point) (string, *Error) {
	nums := append(slices.Clone(head), p.Event, p.Stance, int64(slices.Index(stanceKindCodes, p.StanceKind)),
		p.Claim, p.Message, p.At.UnixMicro(), p.XMax)
	return s.encodeCursor(tag, list, append(nums, p.Running...)...)
}

// pointCursorField reads the cursor field of a page of list read as of a point (pointCursor):
// the page's heads numbers and the point; nil, nil when there is none.
func (s *Service) pointCursorField(o *object, tag string, list CursorList, heads int) ([]int64, *storage.Point, *Error) {
	cursor, has, err := o.str("cursor")
	if err != nil || !has {
		return nil, nil, err
	}
	raw, err := s.OpenCursor(list, "cursor", cursor, badCursor())
	if err != nil {
		return nil, nil, err
	}
	parts := strings.Split(string(raw), ".")
	if len(parts) < 1+heads+pointFixed || parts[0] != tag {
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
	head, pt := n[:heads], n[heads:]
	if pt[2] >= int64(len(stanceKindCodes)) {
		return nil, nil, badCursor()
	}
	p := &storage.Point{Event: pt[0], Stance: pt[1], StanceKind: stanceKindCodes[pt[2]], Claim: pt[3], Message: pt[4],
		At: time.UnixMicro(pt[5]).UTC(), XMax: pt[6]}
	if len(pt) > pointFixed {
		p.Running = pt[pointFixed:]
	}
	return head, p, nil
}
