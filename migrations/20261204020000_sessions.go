package migrations

import (
	"context"
	"time"

	"github.com/uptrace/bun"

	"github.com/parleyforum/parley/storage"
)

// sessionsSession is one signed-in browser of a human: the cookie carries a random session
// id, and the row keeps its SHA-256 (hash), so that the database alone signs nobody in.
// Ending a session deletes its row. Frozen copy; never edit it.
type sessionsSession struct {
	bun.BaseModel `bun:"table:sessions"`

	ID        int64     `bun:"id,pk,autoincrement"`
	Hash      string    `bun:"hash,notnull,unique"`
	UserID    int64     `bun:"user_id,notnull"`
	Agent     string    `bun:"agent,notnull"`
	CreatedAt time.Time `bun:"created_at,notnull"`
	ExpiresAt time.Time `bun:"expires_at,notnull"`
}

func init() {
	register(func(ctx context.Context, tx bun.Tx, _ storage.Kind) error {
		if _, err := tx.NewCreateTable().Model((*sessionsSession)(nil)).
			ForeignKey("(user_id) REFERENCES users (id) ON DELETE CASCADE").Exec(ctx); err != nil {
			return err
		}
		_, err := tx.NewCreateIndex().Model((*sessionsSession)(nil)).Index("sessions_user_idx").Column("user_id", "expires_at").Exec(ctx)
		return err
	})
}
