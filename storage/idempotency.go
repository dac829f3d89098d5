package storage

import (
	"context"
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
}

// IdempotencyKey reads the write identity made with key; ErrNotFound when there is none.
func (f *Forum) IdempotencyKey(ctx context.Context, identity, key string) (*IdempotencyKey, error) {
	k := new(IdempotencyKey)
	err := f.q.NewSelect().Model(k).Where("identity = ? AND ? = ?", identity, bun.Ident("key"), key).Scan(ctx)
	return k, translate(err)
}

// ClaimIdempotencyKey takes identity's key for the write of the caller's transaction, with an
// empty answer that FinishIdempotencyKey fills in before the commit. It reports false when the
// key is taken. On Postgres a claim that meets another transaction's uncommitted claim of the
// same key waits until that one ends: when it commits, this one reports false (the caller
// then answers with its result); when it rolls back, this one takes the key. On SQLite the
// writers take turns anyway.
func (f *Forum) ClaimIdempotencyKey(ctx context.Context, k *IdempotencyKey) (bool, error) {
	res, err := f.q.NewInsert().Model(k).On("CONFLICT (identity, ?) DO NOTHING", bun.Ident("key")).Exec(ctx)
	if err != nil {
		return false, translate(err)
	}
	n, err := res.RowsAffected()
	return n == 1, translate(err)
}

// FinishIdempotencyKey records the answer of the write that claimed k.
func (f *Forum) FinishIdempotencyKey(ctx context.Context, k *IdempotencyKey) error {
	_, err := f.q.NewUpdate().Model(k).Column("fresh", "body").WherePK().Exec(ctx)
	return translate(err)
}

// SweepIdempotencyKeys removes at most batch keys made before cutoff, oldest first, in one
// short statement, and reports how many it removed. A caller sweeps in a loop of small
// batches so that no statement holds anything for long.
func (db *DB) SweepIdempotencyKeys(ctx context.Context, cutoff time.Time, batch int) (int, error) {
	res, err := db.NewRaw(`DELETE FROM idempotency_keys WHERE id IN
		(SELECT id FROM idempotency_keys WHERE created_at < ? ORDER BY created_at LIMIT ?)`, cutoff, batch).Exec(ctx)
	if err != nil {
		return 0, translate(err)
	}
	n, err := res.RowsAffected()
	return int(n), translate(err)
}
