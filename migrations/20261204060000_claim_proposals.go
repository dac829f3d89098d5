package migrations

import (
	"context"

	"github.com/uptrace/bun"

	"github.com/parleyforum/parley/storage"
)

// The moderation queue lists, and every page's navigation counts, the claims whose state is
// a model's unconfirmed proposal (supported, verified or refuted). A partial index on the
// unconfirmed claims by state finds them without scanning every claim. Existing rows are
// indexed as the index is built; nothing else changes.
func init() {
	register(func(ctx context.Context, tx bun.Tx, _ storage.Kind) error {
		_, err := tx.ExecContext(ctx, "CREATE INDEX claims_unconfirmed_idx ON claims (state, id) WHERE state_confirmed_at IS NULL")
		return err
	})
}
