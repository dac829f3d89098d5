package storage

import (
	"context"
	"hash/fnv"
	"time"
)

// WriteTime is one accepted write of an identity, kept for a minute: the writes_per_minute
// limit counts them.
type WriteTime struct {
	Identity string    `bun:"identity,notnull"`
	At       time.Time `bun:"at,notnull"`
}

// CountWrite records a write of identity at now, in the caller's transaction, unless limit
// writes of it fall within the minute before now; then it records nothing and returns the
// time when the oldest of them leaves that minute. The record is undone when the write is.
// Concurrent writers of one identity take turns — on Postgres through a transaction-scoped
// advisory lock on the identity, on SQLite through its one writer at a time — so a limit on
// the count holds across every instance on the database.
func (f *Forum) CountWrite(ctx context.Context, identity string, now time.Time, limit int) (free time.Time, ok bool, err error) {
	if f.db.kind == Postgres {
		if _, err := f.q.NewRaw("SELECT pg_advisory_xact_lock(?)", writeLockKey(identity)).Exec(ctx); err != nil {
			return time.Time{}, false, translate(err)
		}
	}
	since := now.Add(-time.Minute)
	if _, err := f.q.NewDelete().TableExpr("write_times").
		Where("identity = ?", identity).Where("at <= ?", since).Exec(ctx); err != nil {
		return time.Time{}, false, translate(err)
	}
	var recent []time.Time
	err = f.q.NewSelect().TableExpr("write_times").Column("at").
		Where("identity = ?", identity).Where("at > ?", since).Order("at").Limit(int64(limit)).Scan(ctx, &recent)
	if err != nil {
		return time.Time{}, false, translate(err)
	}
	if len(recent) >= limit {
		return recent[0].Add(time.Minute), false, nil
	}
	_, err = f.q.NewInsert().Model(&WriteTime{Identity: identity, At: now}).ModelTableExpr("write_times").Exec(ctx)
	return time.Time{}, err == nil, translate(err)
}

// writeLockKey is the advisory lock of an identity's writes: a hash of it, kept apart from
// the migrations' lock by a prefix. Two identities with one hash only take turns.
func writeLockKey(identity string) int64 {
	h := fnv.New64a()
	h.Write([]byte("parley writes of " + identity))
	return int64(h.Sum64())
}
