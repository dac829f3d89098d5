package storage

import (
	"context"
	"fmt"
	"time"
)

// AwaitHorizon waits until every change committed before the call lies at or below the read
// horizon of the inbox and the feed (see horizonSQL), so that a reader who pages until nothing
// more has seen all of it; patience bounds the wait.
//
// On Postgres the horizon is the oldest transaction still running in this database — of this
// instance, another one or any other client — so one that began before the call holds the
// horizon back until it ends; those of other databases on the server do not. SQLite's
// horizon is always the last change, so the call returns at once.
// Readers never need this (a cursor never skips what the horizon holds back, it only waits);
// tools that must know a read is complete, such as the measurements, do.
func (db *DB) AwaitHorizon(ctx context.Context, patience time.Duration) error {
	if db.kind != Postgres {
		return nil
	}
	// A transaction id taken now is larger than that of every transaction committed before,
	// and the horizon passes it only once all of those and all older running ones have ended.
	var mark int64
	if err := db.NewRaw("SELECT pg_current_xact_id()::text::bigint").Scan(ctx, &mark); err != nil {
		return translate(err)
	}
	deadline := time.Now().Add(patience)
	for {
		var horizon Position
		if err := db.NewRaw(db.horizonSQL()).Scan(ctx, &horizon.Tx, &horizon.Seq); err != nil {
			return translate(err)
		}
		if horizon.Tx > mark {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the read horizon stayed at transaction %d for %s: a transaction older than %d still runs in the database", horizon.Tx, patience, mark)
		}
		select {
		case <-ctx.Done():
			return translate(ctx.Err())
		case <-time.After(20 * time.Millisecond):
		}
	}
}
