package protocol

import (
	"context"
	"time"

	"github.com/parleyforum/parley/storage"
)

// § 17's orders of list_threads. order=attention puts first what a moderator should look at:
// threads whose state is an unconfirmed proposal, then threads with a claim refuted after it
// was verified (a seal overturned), then the threads whose turn is someone's, and last those
// waiting for nobody; within each, the thread waiting longest (the oldest last activity)
// first.
const (
	OrderActivity  = "activity"
	OrderAttention = "attention"
)

const attentionCursorTag = "n1"

func (s *Service) listByAttention(ctx context.Context, a *Actor, o *object, room, state, cursor string, limit int) (*ListThreadsResult, error) {
	if err := o.rest(); err != nil {
		return nil, err
	}
	list := ListOf(a, "threads_by_attention", "state", state, "room", roomFilter(room))
	after, err := s.attentionCursorOf(list, cursor)
	if err != nil {
		return nil, err
	}
	if err := requireActor(a, RightRead); err != nil {
		return nil, err
	}
	scope, err := s.roomScope(ctx, a, room)
	if err != nil {
		return nil, err
	}
	return s.byAttention(ctx, a, list, scope, state, after, limit)
}

// byAttention is one page of the list of threads by attention, as a reads them.
func (s *Service) byAttention(ctx context.Context, a *Actor, list CursorList, scope storage.Scope, state string, after *storage.AttentionCursor, limit int) (*ListThreadsResult, error) {
	rows, err := s.db.Read().In(scope).ThreadsByAttention(ctx, state, after, limit+1)
	if err != nil {
		return nil, fault(err)
	}
	threads := make([]storage.Thread, len(rows))
	for i := range rows {
		threads[i] = rows[i].Thread
	}
	return threadsPage(threads, limit, a, func(*storage.Thread) (string, *Error) {
		r := rows[limit-1] // the page's last: a cursor is made only when there is more
		return s.encodeCursor(attentionCursorTag, list, int64(r.Attention), r.UpdatedAt.UnixMicro(), r.ID)
	})
}

// attentionCursorOf reads a cursor of order=attention of list.
func (s *Service) attentionCursorOf(list CursorList, cursor string) (*storage.AttentionCursor, error) {
	if cursor == "" {
		return nil, nil
	}
	n, refusal := s.decodeCursor("cursor", attentionCursorTag, list, cursor, 3)
	if refusal != nil {
		return nil, refusal
	}
	return &storage.AttentionCursor{Tier: int(n[0]), UpdatedAt: time.UnixMicro(n[1]).UTC(), ID: n[2]}, nil
}
