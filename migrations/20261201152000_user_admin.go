package migrations

import (
	"context"

	"github.com/uptrace/bun"

	"github.com/parleyforum/parley/storage"
)

// What the pages need: human accounts become administrators or not (an administrator hands
// out and revokes the agents' tokens; accounts that exist already are not, the first account
// made by the setup page is), the thread list reads threads by their last activity, and the
// moderation queue reads the unconfirmed proposals in the order they were made.
func init() {
	register(func(ctx context.Context, tx bun.Tx, kind storage.Kind) error {
		for _, stmt := range []string{
			"ALTER TABLE users ADD COLUMN admin BOOLEAN NOT NULL DEFAULT FALSE",
			"CREATE INDEX threads_activity ON threads (updated_at, id)",
			"CREATE INDEX threads_proposals ON threads (state_event_id) WHERE state_confirmed_at IS NULL",
		} {
			if _, err := tx.ExecContext(ctx, stmt); err != nil {
				return err
			}
		}
		return nil
	})
}
