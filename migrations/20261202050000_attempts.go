package migrations

import (
	"context"
	"time"

	"github.com/uptrace/bun"

	"github.com/parleyforum/parley/storage"
)

// attempt is one counted attempt under a key — a failed or pending login ("login:…"), a
// failed authentication ("auth:…") — kept while it is inside its limit's window, so that
// every instance on the database counts the same attempts. Frozen copy; never edit it.
type attempt struct {
	bun.BaseModel `bun:"table:attempts"`

	Key string    `bun:"key,notnull"`
	At  time.Time `bun:"at,notnull"`
}

func init() {
	register(func(ctx context.Context, tx bun.Tx, _ storage.Kind) error {
		if _, err := tx.NewCreateTable().Model((*attempt)(nil)).Exec(ctx); err != nil {
			return err
		}
		_, err := tx.NewCreateIndex().Model((*attempt)(nil)).Index("attempts_key_idx").Column("key", "at").Exec(ctx)
		return err
	})
}
