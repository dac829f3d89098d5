package storage

import (
	"context"
	"database/sql"
	"strings"
	"time"

	"github.com/uptrace/bun"
)

// IdempotencyKey is one successful write remembered by the key its client sent (PROTOCOL.md
// § 15): the operation, a hash of its input, and the answer it gave. It is written in the
// write's own transaction, so a write and its key commit together or not at all.
type IdempotencyKey struct {
	bun.BaseModel `bun:"table:idempotency_keys"`

	ID          int64  `bun:"id,pk,autoincrement"`
	Identity    string `bun:"identity,notnull"`
	Key         string `bun:"key,notnull"`
	Operation   string `bun:"operation,notnull"`
	InputSHA256 string `bun:"input_sha256,notnull"`
	// Fresh is false when the write found what it would have made (an artifact or a key
	// stored before): its answer says so (200 rather than 201).
	Fresh     bool      `bun:"fresh,notnull"`
	Body      string    `bun:"body,notnull"` // the answer, JSON
	CreatedAt time.Time `bun:"created_at,notnull"`
	// Caller is what the writer could do, in the operation layer's words (its rights and the
	// rooms its token reaches): a replay answers only a caller who could do as much. "" for
	// keys written before it was kept.
	Caller string `bun:"caller,notnull"`
}

// IdempotencyKey reads the write identity made with key; ErrNotFound when there is none.
func (f *Forum) IdempotencyKey(ctx context.Context, identity, key string) (*IdempotencyKey, error) {
	k := new(IdempotencyKey)
	err := f.q.NewSelect().Model(k).Where("identity = ? AND ? = ?", identity, bun.Ident("key"), key).Scan(ctx)
	return k, translate(err)
}

// KeepIdempotencyKey stores k, the answer of the write of the caller's transaction, under its
// key, as the transaction's last statement, and reports false when the key is taken: the
// caller then rolls the write back and answers as the write that took the key did. The
// unique index on (identity, key) decides between two requests with one key at once: the
// second one's insert waits for the first one's transaction and, when that commits, finds the
// key taken (when it rolls back, takes it). Taking the key at the end rather than first
// costs a send one statement instead of two (PROTOCOL.md § 15; docs/performance.md).
func (f *Forum) KeepIdempotencyKey(ctx context.Context, k *IdempotencyKey) (bool, error) {
	var rows *sql.Rows
	var err error
	switch {
	case f.prepared():
		rows, err = f.tx.QueryContext(ctx, pgKeepKey, f.db.preparedMode,
			k.Identity, k.Key, k.Operation, k.InputSHA256, k.Fresh, k.Body, k.CreatedAt, k.Caller)
	case f.sqliteHot():
		m := f.db.sqliteModelOf(k)
		if args, ok := sqliteArgs(k, m.columns); ok {
			var st *sql.Stmt
			if st, err = f.stmt(ctx, strings.TrimSuffix(m.insert, ` RETURNING "id"`)+sqliteKeepKeyConflict); err == nil {
				rows, err = st.QueryContext(ctx, args...)
			}
			break
		}
		fallthrough
	default:
		res, err := f.q.NewInsert().Model(k).On("CONFLICT (identity, ?) DO NOTHING", bun.Ident("key")).Exec(ctx)
		if err != nil {
			return false, translate(err)
		}
		n, err := res.RowsAffected()
		return n == 1, translate(err)
	}
	if err != nil {
		return false, translate(err)
	}
	defer rows.Close()
	if !rows.Next() {
		return false, translate(rows.Err())
	}
	if err := rows.Scan(&k.ID); err != nil {
		return false, translate(err)
	}
	return true, translate(rows.Close())
}

// The insert of KeepIdempotencyKey on the hot paths, prepared (reply_pg.go, hotpath_sqlite.go).
var (
	pgKeepKey = `INSERT INTO idempotency_keys (identity, key, operation, input_sha256, fresh, body, created_at, caller)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT (identity, key) DO NOTHING RETURNING id`
	sqliteKeepKeyConflict = ` ON CONFLICT ("identity", "key") DO NOTHING RETURNING "id"`
)

// SweepIdempotencyKeys removes, of the batch oldest keys by id, those made before cutoff, in
// one short statement, and reports how many it removed. A caller sweeps in a loop of small
// batches so that no statement holds anything for long, and stops at a batch with fewer.
//
// Ids follow the keys' times — on SQLite exactly (one writer, and the key's time is taken in
// its write), on Postgres up to the few milliseconds by which concurrent writes commit out of
// order — so the oldest keys come first and the sweep needs no index of its own on the time
// (which every keyed write would change). A key made before cutoff behind a younger one waits
// for the next sweep after that one's cutoff: keys are kept at least their time, never less
// (PROTOCOL.md § 15).
func (db *DB) SweepIdempotencyKeys(ctx context.Context, cutoff time.Time, batch int) (int, error) {
	res, err := db.NewRaw(`DELETE FROM idempotency_keys WHERE id IN
		(SELECT id FROM idempotency_keys ORDER BY id LIMIT ?) AND created_at < ?`, batch, cutoff).Exec(ctx)
	if err != nil {
		return 0, translate(err)
	}
	n, err := res.RowsAffected()
	return int(n), translate(err)
}
