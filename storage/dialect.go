package storage

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/uptrace/bun"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// Every difference between Postgres and SQLite that Parley depends on lives in this file.

// Position is a commit-ordered place in the stream of inbox changes. On Postgres it is the
// writing transaction's id and a sequence number; on SQLite, whose writers are serialised, the
// transaction part is always zero.
type Position struct {
	Tx  int64
	Seq int64
}

// Less orders positions as the inbox reads them.
func (p Position) Less(q Position) bool {
	return p.Tx < q.Tx || (p.Tx == q.Tx && p.Seq < q.Seq)
}

// nextInboxPosition hands out the position of an awaiting change written in tx.
func (db *DB) nextInboxPosition(ctx context.Context, tx bun.IDB) (Position, error) {
	var p Position
	switch db.kind {
	case Postgres:
		err := tx.NewRaw("SELECT pg_current_xact_id()::text::bigint, nextval('inbox_seq')").Scan(ctx, &p.Tx, &p.Seq)
		return p, translate(err)
	default:
		err := tx.NewRaw("UPDATE counters SET value = value + 1 WHERE name = 'inbox' RETURNING value").Scan(ctx, &p.Seq)
		return p, translate(err)
	}
}

// horizonSQL is a one-row SELECT of (htx, hseq), evaluated in the reading statement's own
// snapshot: every inbox position at or below it is final — no transaction that could still
// commit will ever write one there — and every later change lands above it.
//
// On Postgres, a position's transaction part is its writer's top-level transaction id, and
// every transaction that gets an id later gets a larger one; so the oldest transaction still
// in progress in the snapshot bounds what is final, and a cursor that only moves across final
// positions never skips a concurrent commit. Transaction ids are the server's, not the
// database's: left at that, one long transaction of another application, in another database
// of the same server, would hold every reader here back until it ended. A transaction that
// pg_stat_activity shows running in another database (it shows every role each session's
// database and transaction id) cannot write here, so it is passed over; one not shown so — of
// this database, ended since the snapshot, or prepared for two-phase commit and held by no
// session — still bounds the horizon, which can only make a reader wait, never skip. With none
// left, the snapshot's xmax is the bound: every id below it has ended. The activity is read
// only when the snapshot has a transaction in progress.
//
// SQLite serialises its writers and hands out positions in commit order, so the last
// position handed out is the horizon.
func (db *DB) horizonSQL() string {
	if db.kind == Postgres {
		return postgresHorizonSQL
	}
	return "SELECT 0 AS htx, value AS hseq FROM counters WHERE name = 'inbox'"
}

const postgresHorizonSQL = `SELECT COALESCE((
		SELECT min(running) FROM pg_snapshot_xip(snap) AS running
		WHERE running::xid NOT IN (
			SELECT backend_xid FROM pg_stat_activity
			WHERE backend_xid IS NOT NULL
				AND datid <> (SELECT oid FROM pg_database WHERE datname = current_database()))
	), pg_snapshot_xmax(snap))::text::bigint AS htx, 0 AS hseq
	FROM pg_current_snapshot() AS snap`

// feedHorizonSQL is horizonSQL for the feed's positions (migration feed): on Postgres the
// same bound, on SQLite the last row written, since its rows are numbered in commit order.
func (db *DB) feedHorizonSQL() string {
	if db.kind == Postgres {
		return db.horizonSQL()
	}
	return "SELECT 0 AS htx, COALESCE(MAX(seq), 0) AS hseq FROM feed"
}

// lockForUpdate adds the row lock that serialises writers of one thread on Postgres. SQLite's
// BEGIN IMMEDIATE already holds the database's write lock for the whole transaction.
func (db *DB) lockForUpdate(q *bun.SelectQuery) *bun.SelectQuery {
	if db.kind == Postgres {
		return q.For("UPDATE")
	}
	return q
}

// translate maps driver errors onto the sentinel errors of errors.go.
func translate(err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, ErrNotFound) || errors.Is(err, ErrAlreadyExists) || errors.Is(err, ErrUnavailable) {
		return err
	}
	// A connection that cannot be made is an outage, whatever the server gave as the reason
	// (its PgError inside, such as 55000 for a database that takes no connections, or the
	// deadline of a connect to a server that does not answer) — so this comes first.
	var connectErr *pgconn.ConnectError
	if errors.As(err, &connectErr) {
		return fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	// A request's database work that runs out of its deadline met a database that does not
	// answer in time: an outage for the client, who may retry. A client that went away
	// (Canceled) is nobody's outage.
	if errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	if errors.Is(err, context.Canceled) {
		return err
	}
	if errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("%w: %v", ErrNotFound, err)
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		switch {
		case pgErr.Code == "23505":
			return fmt.Errorf("%w: %s", ErrAlreadyExists, pgErr.Message)
		case strings.HasPrefix(pgErr.Code, "08"), pgErr.Code == "57P01", pgErr.Code == "57P02",
			pgErr.Code == "57P03", pgErr.Code == "53300",
			pgErr.Code == "57014": // query_canceled: statement_timeout, or a deadline's cancel request
			return fmt.Errorf("%w: %s", ErrUnavailable, pgErr.Message)
		}
		return err
	}
	var sqliteErr *sqlite.Error
	if errors.As(err, &sqliteErr) {
		switch sqliteErr.Code() {
		case sqlite3.SQLITE_CONSTRAINT_UNIQUE, sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY:
			return fmt.Errorf("%w: %v", ErrAlreadyExists, err)
		case sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED, sqlite3.SQLITE_CANTOPEN, sqlite3.SQLITE_IOERR,
			sqlite3.SQLITE_FULL, sqlite3.SQLITE_READONLY:
			return fmt.Errorf("%w: %v", ErrUnavailable, err)
		}
		return err
	}
	var netErr net.Error
	if errors.As(err, &netErr) || errors.Is(err, driver.ErrBadConn) ||
		errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) || errors.Is(err, sql.ErrConnDone) ||
		pgconn.SafeToRetry(err) || strings.Contains(err.Error(), "conn closed") {
		return fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	return err
}
