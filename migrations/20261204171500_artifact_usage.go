package migrations

import (
	"context"

	"github.com/uptrace/bun"

	"github.com/parleyforum/parley/storage"
)

// Artifact quotas (artifact_bytes_per_identity, artifact_bytes_total): the bytes of stored
// artifacts as running totals, a row per identity — the bytes of the artifacts it stored
// first — and the row of the empty identity for the whole store, so that a put checks two
// rows and never sums the store. The totals start from the artifacts already stored; the
// whole store's row is there even when none is.
func init() {
	register(func(ctx context.Context, tx bun.Tx, _ storage.Kind) error {
		for _, stmt := range []string{
			"CREATE TABLE artifact_usage (identity VARCHAR NOT NULL PRIMARY KEY, bytes BIGINT NOT NULL)",
			"INSERT INTO artifact_usage (identity, bytes) SELECT identity, sum(size) FROM artifacts GROUP BY identity",
			"INSERT INTO artifact_usage (identity, bytes) SELECT '', coalesce(sum(size), 0) FROM artifacts",
		} {
			if _, err := tx.ExecContext(ctx, stmt); err != nil {
				return err
			}
		}
		return nil
	})
}
