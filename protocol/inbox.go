package protocol

import (
	"context"
	"time"

	"github.com/parleyforum/parley/storage"
)

// § 7: the inbox — the threads whose turn is the caller's.

// InboxItem is one thread whose turn is the caller's, with the awaiting and the message that
// set it (the one to reply to).
type InboxItem struct {
	Thread   *ThreadView  `json:"thread"`
	Awaiting *Awaiting    `json:"awaiting"`
	Message  *MessageView `json:"message"`
}

// InboxResult is one page of the inbox, oldest change first.
type InboxResult struct {
	Items  []InboxItem      `json:"items"`
	Cursor string           `json:"cursor"`
	More   bool             `json:"more"`
	at     storage.Position // the cursor's place, where a waiting read reads again
}

// inboxParams is the decoded input of an inbox read.
type inboxParams struct {
	after     storage.Position
	extension *string
	limit     int
	wait      time.Duration
	room      string // the room filter (§ 16); "" for every room the caller reaches
	scope     storage.Scope
	list      CursorList // the inbox as this caller reads it with these filters
}

// Inbox answers {since?, extension?, limit?, wait_seconds?}. With wait_seconds it waits, up
// to that long, until something is the caller's (inbox_wait.go). The end of ctx ends the
// wait, not a read under way: a long poll that its transport ends (at shutdown, or when its
// client has gone) answers with what there is.
func (s *Service) Inbox(ctx context.Context, a *Actor, raw []byte) (*InboxResult, error) {
	p, err := s.decodeInbox(a, raw)
	if err != nil {
		return nil, err
	}
	if err := requireActor(a, RightRead); err != nil {
		return nil, err
	}
	scope, serr := s.roomScope(ctx, a, p.room)
	if serr != nil {
		return nil, serr
	}
	p.scope = scope
	if p.wait == 0 {
		return s.boundedInboxRead(ctx, a, p)
	}
	release, err := s.waits.take(a.Identity)
	if err != nil {
		return nil, err
	}
	defer release()
	return s.waitInbox(ctx, a, p)
}

func (s *Service) decodeInbox(a *Actor, raw []byte) (*inboxParams, *Error) {
	o, err := input(a, raw)
	if err != nil {
		return nil, err
	}
	p := &inboxParams{}
	since, hasSince, err := o.str("since")
	if err != nil {
		return nil, err
	}
	ext, hasExt, err := o.str("extension")
	if err != nil {
		return nil, err
	}
	if hasExt {
		if err := CheckExtension("extension", ext, s.limits); err != nil {
			return nil, err
		}
		p.extension = &ext
	}
	limit, hasLimit, err := o.count("limit", 1, s.limits.InboxMaxItems, true)
	if err != nil {
		return nil, err
	}
	p.limit = s.limits.InboxDefaultItems
	if hasLimit {
		p.limit = limit
	}
	wait, _, err := o.count("wait_seconds", 0, s.limits.InboxMaxWaitSeconds, true)
	if err != nil {
		return nil, err
	}
	p.wait = time.Duration(wait) * time.Second
	if p.room, _, err = o.room("room"); err != nil {
		return nil, err
	}
	if err := o.rest(); err != nil {
		return nil, err
	}
	p.list = ListOf(a, "inbox", "extension", p.extension, "room", roomFilter(p.room))
	if hasSince {
		if p.after, err = s.parseInboxCursor("since", p.list, since); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// boundedInboxRead reads once, within the deadline of one request's database work and
// whatever becomes of ctx: the end of a wait does not cut a read under way.
func (s *Service) boundedInboxRead(ctx context.Context, a *Actor, p *inboxParams) (*InboxResult, error) {
	ctx, cancel := s.Bounded(context.WithoutCancel(ctx))
	defer cancel()
	return s.readInbox(ctx, a, p)
}

func (s *Service) readInbox(ctx context.Context, a *Actor, p *inboxParams) (*InboxResult, error) {
	read := s.db.Read().In(p.scope)
	rows, horizon, err := read.Inbox(ctx, storage.InboxQuery{
		Identity: a.Identity, Extension: p.extension, After: p.after, Limit: p.limit + 1,
	})
	if err != nil {
		return nil, fault(err)
	}
	res := &InboxResult{Items: []InboxItem{}}
	if len(rows) > p.limit {
		rows, res.More = rows[:p.limit], true
	}
	ids := make([]int64, 0, len(rows))
	for _, r := range rows {
		if r.Thread.AwaitingSetBy != nil {
			ids = append(ids, *r.Thread.AwaitingSetBy)
		}
	}
	msgs, err := read.MessagesByID(ctx, ids)
	if err != nil {
		return nil, fault(err)
	}
	byID := make(map[int64]*storage.Message, len(msgs))
	for i := range msgs {
		byID[msgs[i].ID] = &msgs[i]
	}
	for i := range rows {
		t := &rows[i].Thread
		view := threadViewFor(t, a)
		item := InboxItem{Thread: view, Awaiting: view.Awaiting}
		if t.AwaitingSetBy != nil {
			if m, ok := byID[*t.AwaitingSetBy]; ok {
				item.Message = messageView(m)
			}
		}
		res.Items = append(res.Items, item)
	}
	// More to read: continue after the last item. Else everything up to the horizon is seen.
	cursor := horizon
	if res.More {
		cursor = rows[len(rows)-1].Position
	} else if len(rows) > 0 && horizon.Less(rows[len(rows)-1].Position) {
		cursor = rows[len(rows)-1].Position
	}
	if cursor.Less(p.after) {
		cursor = p.after
	}
	c, refusal := s.inboxCursor(p.list, cursor)
	if refusal != nil {
		return nil, refusal
	}
	res.Cursor, res.at = c, cursor
	return res, nil
}
