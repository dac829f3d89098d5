package protocol

import (
	"context"

	"github.com/parleyforum/parley/storage"
)

// § 7: reading threads and events.

// ReadThreadResult is a thread with its messages as a tree and its claims: one page of them.
// A page carries the messages in order of creation, then the claims (read_page.go), as many
// as fit; while next_cursor is given, read again with it as cursor for what follows. On a
// later page a message whose parent came before is a root of the tree, and a claim cut
// between two pages comes again, continued, with the rest of its stances. Every page is
// read as of the first page's point (§ 15, asof.go), which it says as as_of.
type ReadThreadResult struct {
	Thread     *ThreadView    `json:"thread"`
	Messages   []*MessageView `json:"messages"`
	Claims     []*ClaimView   `json:"claims"`
	NextCursor *string        `json:"next_cursor,omitempty"`
	AsOf       *AsOf          `json:"as_of"`
}

// threadPagePosition is where a page of read_thread begins: among the messages, after
// message afterMessage; or among the claims, at claims.
type threadPagePosition struct {
	inClaims     bool
	afterMessage int64
	claims       claimPosition
}

// ReadThread answers {thread, cursor?} with the thread, its message tree nested by parent
// (siblings in order of creation) and its claims, a page at a time, every page as of the
// first page's point: the thread, messages, claims and stances that point held, each claim
// and the thread in the state they had then.
func (s *Service) ReadThread(ctx context.Context, a *Actor, raw []byte) (*ReadThreadResult, error) {
	o, id, err := threadInput(a, raw)
	if err != nil {
		return nil, err
	}
	list := ListOf(a, "read_thread", "thread", id)
	nums, carried, err := s.pointCursorField(o, threadPageCursorTag, list, 3)
	if err != nil {
		return nil, err
	}
	var pos threadPagePosition
	if nums != nil {
		pos = threadPagePosition{inClaims: nums[0] == 1, afterMessage: nums[1], claims: claimPosition{claim: nums[1], afterStance: nums[2]}}
		if nums[0] > 1 || (nums[0] == 0 && nums[2] != 0) {
			return nil, badCursor()
		}
	}
	if err := o.rest(); err != nil {
		return nil, err
	}
	if err := requireActor(a, RightRead); err != nil {
		return nil, err
	}
	// One snapshot: the thread's count, state and awaiting are those of the messages and
	// claims returned with it, also while others write to it; and a later page is read as
	// of the first page's snapshot.
	first := carried == nil
	var point *storage.Point
	var res *ReadThreadResult
	var next *threadPagePosition
	var refused error
	err2 := s.db.Snapshot(ctx, func(ctx context.Context, read *storage.Forum) error {
		read = read.In(ScopeOf(a))
		var err error
		if point, err = beginAsOf(ctx, read, carried); err != nil {
			return err
		}
		t, err := read.Thread(ctx, id)
		if err != nil {
			refused = fault(notFound(err, "thread %s not found", ThreadKey(id)))
			return nil
		}
		if !first {
			if t, err = threadAsOf(ctx, read, t); err != nil {
				return err
			}
		}
		res = &ReadThreadResult{Thread: threadViewFor(t, a), Messages: []*MessageView{}, Claims: []*ClaimView{}}
		room := newPageRoom(s.readPage)
		if !pos.inClaims {
			if res.Messages, next, err = s.threadMessagesPage(ctx, read, a, id, pos.afterMessage, room); err != nil {
				return err
			}
			if next == nil {
				pos = threadPagePosition{inClaims: true}
			}
		}
		if next == nil {
			var more *claimPosition
			if res.Claims, more, err = s.threadClaimsPage(ctx, read, id, pos.claims, room, point.At); err != nil {
				return err
			}
			if more != nil {
				next = &threadPagePosition{inClaims: true, claims: *more}
			}
		}
		if first && next != nil {
			return read.PinPoint(ctx, point)
		}
		return nil
	})
	switch {
	case err2 != nil:
		return nil, fault(err2)
	case refused != nil:
		return nil, refused
	}
	res.AsOf = asOfView(point)
	if next != nil {
		head := []int64{0, next.afterMessage, 0}
		if next.inClaims {
			head = []int64{1, next.claims.claim, next.claims.afterStance}
		}
		c, err := s.pointCursor(threadPageCursorTag, list, head, point)
		if err != nil {
			return nil, err
		}
		res.NextCursor = &c
	}
	return res, nil
}

// threadMessagesPage reads the messages of a thread after afterMessage, in order of creation,
// as many as room takes, nested by parent among themselves; and where the next page begins
// when some are left.
func (s *Service) threadMessagesPage(ctx context.Context, read *storage.Forum, a *Actor, threadID, afterMessage int64, room *pageRoom) ([]*MessageView, *threadPagePosition, error) {
	msgs, err := read.Messages(ctx, threadID)
	if err != nil {
		return nil, nil, err
	}
	from := 0
	for from < len(msgs) && msgs[from].ID <= afterMessage {
		from++
	}
	to := from
	for ; to < len(msgs); to++ {
		n, err := jsonSize(messageViewFor(&msgs[to], a))
		if err != nil {
			return nil, nil, err
		}
		if !room.take(n + len(`,"replies":[]`)) {
			return messageTree(msgs[from:to], a), &threadPagePosition{afterMessage: msgs[to-1].ID}, nil
		}
	}
	return messageTree(msgs[from:to], a), nil, nil
}

// messageTree nests messages by parent, each as reader reads it; msgs come in order of
// creation, so siblings do too.
func messageTree(msgs []storage.Message, reader *Actor) []*MessageView {
	views := make(map[int64]*MessageView, len(msgs))
	roots := []*MessageView{}
	for i := range msgs {
		m := &msgs[i]
		v := messageViewFor(m, reader)
		views[m.ID] = v
		if m.ParentID == nil {
			roots = append(roots, v)
			continue
		}
		if p, ok := views[*m.ParentID]; ok {
			p.Replies = append(p.Replies, v)
		} else {
			roots = append(roots, v) // its parent is on an earlier page
		}
	}
	return roots
}

// input makes the first checks of § 9 that every operation with a caller shares: the caller
// is authenticated, then the input is one JSON object. The token right comes after the
// input is read, when the operation knows what it needs.
func input(a *Actor, raw []byte) (*object, *Error) {
	if a == nil {
		return nil, Refuse(ReasonUnauthenticated, "a bearer token is required (Authorization: Bearer <token>)")
	}
	return decodeObject(raw, "")
}

// threadInput is input for an operation on one thread: it takes the thread field too.
func threadInput(a *Actor, raw []byte) (*object, int64, *Error) {
	o, err := input(a, raw)
	if err != nil {
		return nil, 0, err
	}
	id, err := requiredThread(o)
	return o, id, err
}

// requiredThread takes the thread field every thread operation needs.
func requiredThread(o *object) (int64, *Error) {
	id, ok, err := o.id("thread", "th_")
	if err != nil {
		return 0, err
	}
	if !ok {
		return 0, Refuse(ReasonInvalidBody, "field thread is missing")
	}
	return id, nil
}

// ListThreadsResult is one page of threads, newest first.
type ListThreadsResult struct {
	Threads []*ThreadView `json:"threads"`
	Cursor  *string       `json:"cursor"`
	More    bool          `json:"more"`
}

// ListThreads answers {state?, order?, cursor?, limit?}: the newest threads first
// (order=activity, the default), or by attention (§ 17, ListByAttention).
func (s *Service) ListThreads(ctx context.Context, a *Actor, raw []byte) (*ListThreadsResult, error) {
	o, err := input(a, raw)
	if err != nil {
		return nil, err
	}
	state, _, err := o.str("state")
	if err != nil {
		return nil, err
	}
	if state != "" && !IsState(State(state)) {
		return nil, Refuse(ReasonInvalidBody, "field state %q is not one of open, answered, decided, closed, deferred, obsolete, rejected", state)
	}
	cursor, hasCursor, err := o.str("cursor")
	if err != nil {
		return nil, err
	}
	order, _, err := o.str("order")
	if err != nil {
		return nil, err
	}
	if order != "" && order != OrderActivity && order != OrderAttention {
		return nil, Refuse(ReasonInvalidBody, "field order must be activity or attention, not %q", order)
	}
	attention := order == OrderAttention
	limit, hasLimit, err := o.count("limit", 1, s.limits.ListMaxItems, true)
	if err != nil {
		return nil, err
	}
	if !hasLimit {
		limit = min(50, s.limits.ListMaxItems)
	}
	room, _, err := o.room("room")
	if err != nil {
		return nil, err
	}
	if attention {
		return s.listByAttention(ctx, a, o, room, state, cursor, limit)
	}
	if err := o.rest(); err != nil {
		return nil, err
	}
	list := ListOf(a, "threads", "state", state, "room", roomFilter(room))
	var before int64
	if hasCursor {
		n, err := s.decodeCursor("cursor", threadsCursorTag, list, cursor, 1)
		if err != nil {
			return nil, err
		}
		before = n[0]
	}
	if err := requireActor(a, RightRead); err != nil {
		return nil, err
	}
	scope, err2 := s.roomScope(ctx, a, room)
	if err2 != nil {
		return nil, err2
	}
	rows, err2 := s.db.Read().In(scope).ThreadsPage(ctx, state, before, limit+1)
	if err2 != nil {
		return nil, fault(err2)
	}
	return threadsPage(rows, limit, a, func(last *storage.Thread) (string, *Error) {
		return s.encodeCursor(threadsCursorTag, list, last.ID)
	})
}

// ReadEventsResult is a thread's events after a cursor, oldest first.
type ReadEventsResult struct {
	Events []*EventView `json:"events"`
	Cursor string       `json:"cursor"`
	More   bool         `json:"more"`
}

// eventsPage bounds one read of events.
const eventsPage = 1000

// ReadEvents answers {thread, since?}.
func (s *Service) ReadEvents(ctx context.Context, a *Actor, raw []byte) (*ReadEventsResult, error) {
	o, id, err := threadInput(a, raw)
	if err != nil {
		return nil, err
	}
	since, hasSince, err := o.str("since")
	if err != nil {
		return nil, err
	}
	list := ListOf(a, "events", "thread", id)
	var after int64
	if hasSince {
		n, err := s.decodeCursor("since", eventsCursorTag, list, since, 1)
		if err != nil {
			return nil, err
		}
		after = n[0]
	}
	if err := o.rest(); err != nil {
		return nil, err
	}
	if err := requireActor(a, RightRead); err != nil {
		return nil, err
	}
	// One snapshot (§ 15): the thread and its page of events. Writers of one thread take
	// turns (its row lock), so its event ids grow in commit order and an id cursor never
	// skips.
	var rows []storage.Event
	err2 := s.db.Snapshot(ctx, func(ctx context.Context, read *storage.Forum) error {
		read = read.In(ScopeOf(a))
		if _, err := read.Thread(ctx, id); err != nil {
			return notFound(err, "thread %s not found", ThreadKey(id))
		}
		var err error
		rows, err = read.Events(ctx, id, after, eventsPage+1)
		return err
	})
	if err2 != nil {
		return nil, fault(err2)
	}
	res := &ReadEventsResult{Events: []*EventView{}}
	if len(rows) > eventsPage {
		rows, res.More = rows[:eventsPage], true
	}
	for i := range rows {
		res.Events = append(res.Events, eventView(&rows[i]))
		after = rows[i].ID
	}
	c, refusal := s.encodeCursor(eventsCursorTag, list, after)
	if refusal != nil {
		return nil, refusal
	}
	res.Cursor = c
	return res, nil
}
