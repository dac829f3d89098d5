package migrations

import (
	"context"
	"time"

	"github.com/uptrace/bun"

	"github.com/parleyforum/parley/storage"
)

// writeTime is one accepted write of an identity within the last minute: the
// writes_per_minute limit (§ 8) counts them in the database, so that every instance on it
// counts the same writes. Frozen copy; never edit it.
type writeTime struct {
	bun.BaseModel `bun:"table:write_times"`

	Identity string    `bun:"identity,notnull"`
	At       time.Time `bun:"at,notnull"`
}

func init() {
	register(func(ctx context.Context, tx bun.Tx, _ storage.Kind) error {
		if _, err := tx.NewCreateTable().Model((*writeTime)(nil)).Exec(ctx); err != nil {
			return err
		}
		_, err := tx.NewCreateIndex().Model((*writeTime)(nil)).Index("write_times_identity_idx").Column("identity", "at").Exec(ctx)
		return err
	})
}
