package storage

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/uptrace/bun"
)

// CommitGrace is how long a commit that was sent before the request's deadline may take
// beyond it. A write is decided at its commit: until COMMIT is sent the request's deadline
// ends it (rolled back, answered unavailable); once sent, its outcome is waited for, so
// that a write the database committed is answered as committed and not as an outage. A
// commit that gets no answer within the grace is ended too (docs/reliability.md).
const CommitGrace = time.Second

// beginner is what a transaction begins on: the pool (bun.DB) or one connection (bun.Conn).
type beginner interface {
	BeginTx(ctx context.Context, opts *sql.TxOptions) (bun.Tx, error)
}

// runTx runs fn in one read-write transaction on b under ctx's deadline, and commits it
// only while that deadline has not passed: a write is either committed (and its caller
// answered as such, even when the deadline passes during the commit's round trip) or rolled
// back. fn's statements run under ctx itself; the transaction's own context follows ctx
// until the commit is sent and then has CommitGrace of its own, so that a commit in flight
// is not cut off by the request's deadline.
func runTx(ctx context.Context, b beginner, fn func(ctx context.Context, tx bun.Tx) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	txCtx, end := context.WithCancel(context.WithoutCancel(ctx))
	defer end()
	// Until the commit, the request's end (its deadline, its client gone) ends the
	// transaction: database/sql rolls back a transaction whose context ends.
	unfollow := context.AfterFunc(ctx, end)
	// ended is err, or the request's own end when that is what ended the transaction.
	ended := func(err error) error {
		if err != nil && errors.Is(err, context.Canceled) && ctx.Err() != nil {
			return ctx.Err()
		}
		return endedWith(ctx, err)
	}
	tx, err := b.BeginTx(txCtx, nil)
	if err != nil {
		unfollow()
		return ended(err)
	}
	committed := false
	defer func() {
		if !committed {
			_ = tx.Rollback() // after a panic in fn; otherwise a no-op (ErrTxDone)
		}
	}()
	if err := fn(ctx, tx); err != nil {
		unfollow()
		_ = tx.Rollback()
		return ended(err)
	}
	// unfollow can win the race against a deadline that has just passed (the context closes
	// Done before it runs its AfterFuncs), so the request's own end is asked for too.
	if !unfollow() || ctx.Err() != nil {
		// The request ended before its commit: rolled back, nothing was written.
		_ = tx.Rollback()
		if err := ctx.Err(); err != nil {
			return err
		}
		return context.DeadlineExceeded
	}
	grace := time.AfterFunc(CommitGrace, end)
	defer grace.Stop()
	committed = true
	err = tx.Commit()
	if err != nil && errors.Is(err, context.Canceled) && txCtx.Err() != nil {
		// The commit outlived its grace: the database did not answer it in time.
		return context.DeadlineExceeded
	}
	return err
}

// endedWith is err, or the request's own end when that is what ended the transaction under
// it: database/sql rolls back a transaction whose context ends, and a query made after that
// fails with sql.ErrTxDone, which says nothing of why. A deadline that passed between two
// queries of one transaction is the database not answering in time — unavailable, not a
// fault of the server.
func endedWith(ctx context.Context, err error) error {
	if err != nil && ctx.Err() != nil && errors.Is(err, sql.ErrTxDone) {
		return fmt.Errorf("%w (%w)", ctx.Err(), err)
	}
	return err
}
