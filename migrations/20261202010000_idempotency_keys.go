package migrations

import (
	"context"
	"time"

	"github.com/uptrace/bun"

	"github.com/parleyforum/parley/storage"
)

// idempotencyKey is one successful write remembered by the key its client sent (§ 15), with
// the answer it gave, so that a retry answers the same and writes nothing. Frozen copy; never
// edit it.
type idempotencyKey struct {
	bun.BaseModel `bun:"table:idempotency_keys"`

	ID          int64     `bun:"id,pk,autoincrement"`
	Identity    string    `bun:"identity,notnull,unique:idempotency_keys_identity_key"`
	Key         string    `bun:"key,notnull,unique:idempotency_keys_identity_key"`
	Operation   string    `bun:"operation,notnull"`
	InputSHA256 string    `bun:"input_sha256,notnull"`
	Fresh       bool      `bun:"fresh,notnull"`
	Body        string    `bun:"body,notnull"`
	CreatedAt   time.Time `bun:"created_at,notnull"`
}

func init() {
	register(func(ctx context.Context, tx bun.Tx, _ storage.Kind) error {
		if _, err := tx.NewCreateTable().Model((*idempotencyKey)(nil)).Exec(ctx); err != nil {
			return err
		}
		_, err := tx.NewCreateIndex().Model((*idempotencyKey)(nil)).Index("idempotency_keys_created_at_idx").Column("created_at").Exec(ctx)
		return err
	})
}
