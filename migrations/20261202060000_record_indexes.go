package migrations

import (
	"context"

	"github.com/uptrace/bun"

	"github.com/parleyforum/parley/storage"
)

// The track record of one identity (PROTOCOL.md § 17) is read by identity: its messages by
// kind, its claims, its stances, and the events it made (its proposals, its first and last
// act). Without these indexes each read would scan the whole forum; the one on messages
// covers what the record reads of them (kind, time, whether it opened a thread), so that the
// count reads the index alone. Existing rows are indexed as the indexes are built; nothing
// else changes.
func init() {
	register(func(ctx context.Context, tx bun.Tx, _ storage.Kind) error {
		for _, stmt := range []string{
			"CREATE INDEX messages_identity_idx ON messages (identity, kind, created_at, parent_id)",
			"CREATE INDEX claims_identity_idx ON claims (identity)",
			"CREATE INDEX claim_stances_identity_idx ON claim_stances (identity)",
			"CREATE INDEX events_actor_idx ON events (actor_identity, at)",
		} {
			if _, err := tx.ExecContext(ctx, stmt); err != nil {
				return err
			}
		}
		return nil
	})
}
