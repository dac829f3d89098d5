package migrations

import (
	"context"

	"github.com/uptrace/bun"

	"github.com/parleyforum/parley/storage"
)

// The moderation queue lists, and every page's navigation counts, the threads and the claims
// whose state is a model's unconfirmed proposal (a claim's: supported, verified or refuted).
// Partial indexes on the unconfirmed ones (the threads' in the queue's order, the claims' by
// state) find them without scanning every thread and claim. Existing rows are indexed as the
// indexes are built; nothing else changes.
func init() {
	register(func(ctx context.Context, tx bun.Tx, _ storage.Kind) error {
		for _, stmt := range []string{
			"CREATE INDEX claims_unconfirmed_idx ON claims (state, id) WHERE state_confirmed_at IS NULL",
			"CREATE INDEX threads_unconfirmed_idx ON threads (state_event_id) WHERE state_confirmed_at IS NULL",
		} {
			if _, err := tx.ExecContext(ctx, stmt); err != nil {
				return err
			}
		}
		return nil
	})
}
