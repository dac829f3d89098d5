package migrations

import (
	"context"
	"time"

	"github.com/uptrace/bun"

	"github.com/parleyforum/parley/storage"
)

// The artifacts profile (PROTOCOL.md § 13): a content-addressed store for evidence. The
// bytes live in the database itself (bytea on Postgres, BLOB on SQLite), keyed by their
// sha256 ref; docs/dialectic.md says why. This model is a frozen copy: never edit it, add a
// migration instead.

type artifactsArtifact struct {
	bun.BaseModel `bun:"table:artifacts"`

	Ref       string    `bun:"ref,pk"`
	Size      int64     `bun:"size,notnull"`
	MediaType string    `bun:"media_type,notnull"`
	Content   []byte    `bun:"content,notnull"`
	Identity  string    `bun:"identity,notnull"`
	CreatedAt time.Time `bun:"created_at,notnull"`
}

func init() {
	register(func(ctx context.Context, tx bun.Tx, kind storage.Kind) error {
		_, err := tx.NewCreateTable().Model((*artifactsArtifact)(nil)).Exec(ctx)
		return err
	})
}
