package storage

import (
	"context"
	"time"

	"github.com/uptrace/bun"
)

// ActivityCursor is a place in the list of threads by last activity: the thread last shown.
type ActivityCursor struct {
	UpdatedAt time.Time
	ID        int64
}

// ThreadsByActivity lists threads with the newest activity first, after the cursor (nil: from
// the newest), optionally only of one state and only those whose state is an unconfirmed
// proposal.
func (f *Forum) ThreadsByActivity(ctx context.Context, state string, unconfirmed bool, after *ActivityCursor, limit int) ([]Thread, error) {
	return f.threadsByRoom(ctx, limit, []string{"updated_at DESC", "id DESC"}, func(q *bun.SelectQuery) *bun.SelectQuery {
		if state != "" {
			q = q.Where("state = ?", state)
		}
		if unconfirmed {
			q = q.Where("state_confirmed_at IS NULL")
		}
		if after != nil {
			q = q.Where("(updated_at < ? OR (updated_at = ? AND id < ?))", after.UpdatedAt, after.UpdatedAt, after.ID)
		}
		return q
	})
}

// Proposals lists the threads whose state is an unconfirmed proposal, the oldest proposal
// first, after the proposal event afterEventID (0: from the oldest).
func (f *Forum) Proposals(ctx context.Context, afterEventID int64, limit int) ([]Thread, error) {
	var out []Thread
	q := f.q.NewSelect().Model(&out).
		Where("state_confirmed_at IS NULL").Where("state_event_id > ?", afterEventID).
		Order("state_event_id").Limit(int64(limit))
	err := f.scope.onRooms(q, "room_id").Scan(ctx)
	return out, translate(err)
}

// EventsByID reads the events with the given ids, in no particular order.
func (f *Forum) EventsByID(ctx context.Context, ids []int64) ([]Event, error) {
	out := []Event{}
	if len(ids) == 0 {
		return out, nil
	}
	err := f.q.NewSelect().Model(&out).Where("id IN (?)", bun.In(ids)).Scan(ctx)
	return out, translate(err)
}

// LiveTokensOf lists the tokens of the given identities that are not revoked, oldest first.
func (db *DB) LiveTokensOf(ctx context.Context, identities []string) ([]Token, error) {
	out := []Token{}
	if len(identities) == 0 {
		return out, nil
	}
	err := db.NewSelect().Model(&out).Where("identity IN (?)", bun.In(identities)).
		Where("revoked_at IS NULL").Order("id").Scan(ctx)
	return out, translate(err)
}

// Attention tiers of order=attention (§ 17), most urgent first.
const (
	AttentionProposal      = 0 // the thread's state is an unconfirmed proposal
	AttentionSealRefuted   = 1 // a claim of the thread is refuted after it was verified
	AttentionWaiting       = 2 // someone's turn: listed in an inbox
	AttentionNothingToWait = 3 // confirmed closed, a side state, or nobody awaited
)

// AttentionCursor is a place in the list by attention: the thread last shown.
type AttentionCursor struct {
	Tier      int
	UpdatedAt time.Time
	ID        int64
}

// AttentionThread is a thread with its attention tier.
type AttentionThread struct {
	Thread    `bun:",extend"`
	Attention int `bun:"attention,scanonly"`
}

// ThreadsByAttention lists threads in the order of § 17's order=attention: the tiers above,
// and in each the thread waiting longest (the oldest last activity) first; after the cursor
// (nil: from the start), optionally only of one state.
func (f *Forum) ThreadsByAttention(ctx context.Context, state string, after *AttentionCursor, limit int) ([]AttentionThread, error) {
	sealRefuted := f.q.NewSelect().TableExpr("claims AS c").ColumnExpr("1").
		Where("c.thread_id = t.id").Where("c.state = ?", "refuted").
		Where("EXISTS (SELECT 1 FROM events AS e WHERE e.thread_id = c.thread_id AND e.subject = 'cl_' || c.id AND e.from_state = ? AND e.to_state = ?)", "verified", "refuted")
	inner := f.q.NewSelect().TableExpr("threads AS t").ColumnExpr("t.*").
		ColumnExpr("CASE WHEN t.state_confirmed_at IS NULL THEN ? WHEN EXISTS (?) THEN ? WHEN t.inbox_to IS NOT NULL THEN ? ELSE ? END AS attention",
			AttentionProposal, sealRefuted, AttentionSealRefuted, AttentionWaiting, AttentionNothingToWait)
	inner = f.scope.onRooms(inner, "t.room_id")
	if state != "" {
		inner = inner.Where("t.state = ?", state)
	}
	var out []AttentionThread
	q := f.q.NewSelect().Model(&out).ModelTableExpr("(?) AS thread", inner).
		ColumnExpr("thread.*").
		OrderExpr("thread.attention, thread.updated_at, thread.id").Limit(int64(limit))
	if after != nil {
		q = q.Where("(thread.attention > ? OR (thread.attention = ? AND (thread.updated_at > ? OR (thread.updated_at = ? AND thread.id > ?))))",
			after.Tier, after.Tier, after.UpdatedAt, after.UpdatedAt, after.ID)
	}
	err := q.Scan(ctx)
	return out, translate(err)
}
