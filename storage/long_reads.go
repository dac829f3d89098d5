package storage

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"sync"
	"time"

	"github.com/uptrace/bun"
)

// Long reads (PROTOCOL.md § 19): an export reads one snapshot for as long as its reader takes
// to read it — minutes for a large forum or a slow client — and holds a connection all that
// time. Long reads take their connections from a pool of their own, a quarter the size of the
// forum's (8 beside Postgres's 32, 2 beside a SQLite file's 8 readers), so that while every
// export slot is busy the rest of the forum keeps every connection it had. A snapshot is
// opened — its connection taken, its transaction begun and its first read made — under the
// deadline of the request that asks for it, and read afterwards under the export's own.

// LongReadPool is the pool of long reads, for the metrics; nil where it is the forum's own
// pool (an in-memory SQLite database).
func (db *DB) LongReadPool() *sql.DB {
	if db.longReads == nil || db.longReads == db.DB {
		return nil
	}
	return db.longReads.DB
}

// LongReadConnections is how many long reads can hold a snapshot at once.
func (db *DB) LongReadConnections() int {
	return db.longReads.DB.Stats().MaxOpenConnections
}

// OpenSnapshot opens a snapshot on the pool of long reads: every query of its Forum sees one
// committed state of the database (as Snapshot's), until Close. It is open when OpenSnapshot
// returns — the connection taken, the transaction begun and its snapshot fixed by a first
// read — or it failed within ctx: ErrUnavailable when the pool or the database did not answer
// in time. Only the opening runs under ctx; each query of the snapshot runs under its own.
func (db *DB) OpenSnapshot(ctx context.Context) (*OpenedSnapshot, error) {
	conn, err := db.longReads.Conn(ctx)
	if err != nil {
		return nil, translate(err)
	}
	s := &OpenedSnapshot{conn: conn}
	begin, fix := "BEGIN ISOLATION LEVEL REPEATABLE READ, READ ONLY", "SELECT 1"
	if db.kind == SQLite {
		// The pool's transactions begin IMMEDIATE, taking the write lock, which a read must
		// not wait for; in WAL mode a deferred transaction's first read of the database fixes
		// the snapshot, and writers go on beside it.
		begin, fix = "BEGIN DEFERRED", "SELECT count(*) FROM sqlite_master"
	}
	if _, err := conn.ExecContext(ctx, begin); err != nil {
		s.drop()
		return nil, translate(err)
	}
	s.begun = true
	if _, err := conn.ExecContext(ctx, fix); err != nil {
		_ = s.Close()
		return nil, translate(err)
	}
	s.forum = &Forum{db: db, q: conn}
	return s, nil
}

// rollbackTimeout bounds the end of a snapshot's transaction.
const rollbackTimeout = 5 * time.Second

// OpenedSnapshot is a snapshot open on the pool of long reads (OpenSnapshot).
type OpenedSnapshot struct {
	conn   bun.Conn
	forum  *Forum
	begun  bool
	closed sync.Once
	err    error
}

// Forum reads the snapshot.
func (s *OpenedSnapshot) Forum() *Forum { return s.forum }

// Close ends the snapshot and gives its connection back; it may be called more than once.
// The transaction only read: ending it is all there is to do. A connection whose transaction
// could not be ended does not go back to the pool.
func (s *OpenedSnapshot) Close() error {
	s.closed.Do(func() {
		if s.begun {
			// A database that hangs now must not hold the caller: the connection is dropped.
			ctx, cancel := context.WithTimeout(context.Background(), rollbackTimeout)
			defer cancel()
			if _, err := s.conn.ExecContext(ctx, "ROLLBACK"); err != nil {
				s.err = translate(err)
				s.drop()
				return
			}
		}
		s.err = translate(s.conn.Close())
	})
	return s.err
}

// drop closes the connection so that the pool opens another in its place.
func (s *OpenedSnapshot) drop() {
	_ = s.conn.Raw(func(any) error { return driver.ErrBadConn })
	if err := s.conn.Close(); err != nil && !errors.Is(err, sql.ErrConnDone) && !errors.Is(err, driver.ErrBadConn) {
		s.err = errors.Join(s.err, err)
	}
}
