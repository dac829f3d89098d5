package storage

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"time"

	"github.com/uptrace/bun"
)

// Snapshot runs fn with queries that all see one committed state of the database, for a read
// of several statements whose results must agree — a thread and its messages: read one after
// the other outside a transaction, a message committed between the two is in the tree and not
// yet in the thread's count.
//
// On Postgres it is a read-only REPEATABLE READ transaction. On SQLite it is a deferred
// transaction on one connection (the pool's transactions begin IMMEDIATE, taking the write
// lock, which a read must not wait for): in WAL mode its first read fixes the snapshot that the
// others see, and writers go on beside it.
func (db *DB) Snapshot(ctx context.Context, fn func(ctx context.Context, f *Forum) error) error {
	if db.kind == Postgres {
		return translate(endedWith(ctx, db.RunInTx(ctx, &sql.TxOptions{Isolation: sql.LevelRepeatableRead, ReadOnly: true},
			func(ctx context.Context, tx bun.Tx) error { return fn(ctx, &Forum{db: db, q: tx}) })))
	}
	conn, err := db.Conn(ctx)
	if err != nil {
		return translate(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "BEGIN DEFERRED"); err != nil {
		return translate(err)
	}
	err = fn(ctx, &Forum{db: db, q: conn})
	// The transaction only read: ending it is all there is to do. A connection whose
	// transaction could not be ended must not go back to the pool.
	if _, rbErr := conn.ExecContext(context.WithoutCancel(ctx), "ROLLBACK"); rbErr != nil {
		_ = conn.Raw(func(any) error { return driver.ErrBadConn })
		err = errors.Join(err, rbErr)
	}
	return translate(err)
}

// SnapshotTime is the time of the snapshot of f, a Forum of Snapshot: it makes the
// snapshot's first read if none was made yet, which fixes what the snapshot holds, and
// answers the clock after it. Every row the snapshot holds was committed before that read, so
// stamped before the time answered (PROTOCOL.md § 14: no row of an export is younger than its
// exported_at). The clock read before the first read is not: a write stamped and committed in
// between is in the snapshot and younger. Rows are stamped by the clock of the instance that
// wrote them, so the instances of one forum keep their clocks in step (docs/operating.md).
func (f *Forum) SnapshotTime(ctx context.Context) (time.Time, error) {
	var n int
	if err := f.q.NewRaw("SELECT COUNT(*) FROM settings").Scan(ctx, &n); err != nil {
		return time.Time{}, translate(err)
	}
	return Now(), nil
}
