package storage

import (
	"context"
	"database/sql"
	"fmt"
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
// time when the oldest of them leaves that minute. The record is undone when the write is,
// and the identity's records older than a minute are removed on the way.
//
// Concurrent writers of one identity take turns — on Postgres through a transaction-scoped
// advisory lock on the identity, taken in a statement of its own so that the count after it
// sees every write committed before, on SQLite through its one writer at a time — so a limit
// on the count holds across every instance on the database. On Postgres, inside DB.Write, the
// lock and the count are two prepared statements: they are on every send's path.
//
// A non-zero token is the id of the token the write was authenticated with: when it has been
// revoked in the meantime, CountWrite records nothing and returns ErrRevoked, so that a token
// verified earlier (on Postgres, perhaps from memory; see tokenCache) never writes after its
// revocation has committed.
func (f *Forum) CountWrite(ctx context.Context, identity string, token int64, now time.Time, limit int) (free time.Time, ok bool, err error) {
	since := now.Add(-time.Minute)
	if f.prepared() {
		return f.countWritePostgres(ctx, identity, token, since, now, limit)
	}
	if f.sqliteHot() {
		if added, err := f.countWriteSQLite(ctx, identity, token, since, now, limit); err != nil || added {
			return time.Time{}, added, err
		}
	} else {
		if f.db.kind == Postgres {
			if _, err := f.q.NewRaw("SELECT pg_advisory_xact_lock(?)", writeLockKey(identity)).Exec(ctx); err != nil {
				return time.Time{}, false, translate(err)
			}
		}
		if _, err := f.q.NewRaw(deleteOldWrites, identity, since).Exec(ctx); err != nil {
			return time.Time{}, false, translate(err)
		}
		res, err := f.q.NewRaw(insertCountedWrite, identity, now, identity, limit, token, token).Exec(ctx)
		if err != nil {
			return time.Time{}, false, translate(err)
		}
		if n, err := res.RowsAffected(); err != nil || n == 1 {
			return time.Time{}, err == nil, translate(err)
		}
	}
	var oldest time.Time // bun's scan, which reads SQLite's text times
	var live bool
	err = f.q.NewRaw("SELECT min(at), "+tokenLive+" FROM write_times WHERE identity = ? AND at > ?",
		token, token, identity, since).Scan(ctx, &oldest, &live)
	if err == nil && !live {
		return time.Time{}, false, revokedSince(token)
	}
	return oldest.Add(time.Minute), false, translate(err)
}

// The write count in two statements, on both databases: the delete of the identity's records
// older than a minute, after which the records left are those of the minute and the
// identity's row of write_counts (kept by triggers on write_times) counts them; then the
// record of the write, unless the count reaches the limit or the token is revoked.
const (
	deleteOldWrites    = "DELETE FROM write_times WHERE identity = ? AND at <= ?"
	insertCountedWrite = `INSERT INTO write_times (identity, at) SELECT ?, ?
		WHERE coalesce((SELECT n FROM write_counts WHERE identity = ?), 0) < ? AND ` + tokenLive
)

// tokenLive is true when the token (its id given twice; 0 for none) is not revoked.
const tokenLive = "(? = 0 OR EXISTS (SELECT 1 FROM tokens WHERE id = ? AND revoked_at IS NULL))"

// revokedSince is the error of a write whose token was revoked after it was verified.
func revokedSince(token int64) error {
	return fmt.Errorf("%w: token %d, since it was verified for this write", ErrRevoked, token)
}

const (
	pgWriteLock = "SELECT pg_advisory_xact_lock($1)"
	// pgTokenLive is tokenLive for the token $5.
	pgTokenLive = "($5::bigint = 0 OR EXISTS (SELECT 1 FROM tokens WHERE id = $5 AND revoked_at IS NULL))"
)

// pgCountWrite is the count in one statement: the records older than a minute are deleted in
// it, and its read of write_counts, taken before the statement's triggers run, still counts
// them. The oldest record of the minute is read only for a refusal.
var pgCountWrite = `WITH gone AS (DELETE FROM write_times WHERE identity = $1 AND at <= $2 RETURNING 1),
		recent AS (SELECT ` + pgRecentWrites("$1") + ` AS n, ` + pgTokenLive + ` AS live),
		added AS (INSERT INTO write_times (identity, at) SELECT $1, $3 FROM recent WHERE n < $4 AND live)
		SELECT n, ` + pgOldestWrite("$1", "$2", "n", "$4") + `, live FROM recent`

// pgRecentWrites is, in a statement that deletes the identity's records older than a
// minute in the WITH gone, the count of its records within the minute.
func pgRecentWrites(identity string) string {
	return "coalesce((SELECT n FROM write_counts WHERE identity = " + identity + "), 0) - (SELECT count(*) FROM gone)"
}

// pgOldestWrite is the time of the identity's oldest record after since when the count n
// reaches the limit, and NULL otherwise (when nobody needs it).
func pgOldestWrite(identity, since, n, limit string) string {
	return "CASE WHEN " + n + " >= " + limit + " THEN (SELECT min(at) FROM write_times WHERE identity = " +
		identity + " AND at > " + since + ") END AS oldest"
}

func (f *Forum) countWritePostgres(ctx context.Context, identity string, token int64, since, now time.Time, limit int) (time.Time, bool, error) {
	if f.writeLocked != identity {
		if err := f.lockWrites(ctx, identity); err != nil {
			return time.Time{}, false, err
		}
	}
	var n int
	var oldest sql.NullTime
	var live bool
	row := f.tx.QueryRowContext(ctx, pgCountWrite, f.db.preparedMode, identity, since, now, limit, token)
	if err := row.Scan(&n, &oldest, &live); err != nil {
		return time.Time{}, false, translate(err)
	}
	switch {
	case !live:
		return time.Time{}, false, revokedSince(token)
	case n < limit:
		return time.Time{}, true, nil
	}
	return oldest.Time.Add(time.Minute), false, nil
}

// lockWrites takes identity's write lock in a statement of its own, so that the statements
// after it see every write of identity committed before.
func (f *Forum) lockWrites(ctx context.Context, identity string) error {
	if _, err := f.tx.ExecContext(ctx, pgWriteLock, f.db.preparedMode, writeLockKey(identity)); err != nil {
		return translate(err)
	}
	f.writeLocked = identity
	return nil
}

// WriteCount is a write to count against its identity's writes_per_minute, at Now, inside the
// write itself (MessageWrite.Count).
type WriteCount struct {
	Identity string
	Token    int64 // the id of the token the write was authenticated with, checked as CountWrite does; 0 for none
	Now      time.Time
	Limit    int
}

// WriteLimited refuses a counted write: Limit writes of its identity fall within the minute
// before it. Free is when the oldest of them leaves that minute.
type WriteLimited struct{ Free time.Time }

func (e *WriteLimited) Error() string {
	return "storage: the identity's writes within the last minute reach the limit until " + e.Free.Format(time.RFC3339)
}

// writeLockKey is the advisory lock of an identity's writes: a hash of it, kept apart from
// the migrations' lock by a prefix. Two identities with one hash only take turns.
func writeLockKey(identity string) int64 {
	h := fnv.New64a()
	h.Write([]byte("parley writes of " + identity))
	return int64(h.Sum64())
}
