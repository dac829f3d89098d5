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
	var out []Thread
	q := f.q.NewSelect().Model(&out).Order("updated_at DESC", "id DESC").Limit(int64(limit))
	q = f.scope.onRooms(q, "room_id")
	if state != "" {
		q = q.Where("state = ?", state)
	}
	if unconfirmed {
		q = q.Where("state_confirmed_at IS NULL")
	}
	if after != nil {
		q = q.Where("(updated_at < ? OR (updated_at = ? AND id < ?))", after.UpdatedAt, after.UpdatedAt, after.ID)
	}
	err := q.Scan(ctx)
	return out, translate(err)
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
