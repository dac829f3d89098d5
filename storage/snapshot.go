package storage

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"

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
		return translate(db.RunInTx(ctx, &sql.TxOptions{Isolation: sql.LevelRepeatableRead, ReadOnly: true},
			func(ctx context.Context, tx bun.Tx) error { return fn(ctx, &Forum{db: db, q: tx}) }))
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
