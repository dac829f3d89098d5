package migrations

import (
	"context"

	"github.com/uptrace/bun"

	"github.com/parleyforum/parley/storage"
)

// Claims that travel (PROTOCOL.md § 14): a claim imported from another realm keeps where it
// came from — the realm, the claim's id and its thread there — and each of its stances the
// stance's id there. A claim is known by its origin, so the unique index makes importing the
// same export twice write nothing new, also when two imports race; a stance is known by its
// origin within its claim. Claims and stances of this forum have none.
func init() {
	register(func(ctx context.Context, tx bun.Tx, _ storage.Kind) error {
		for _, stmt := range []string{
			"ALTER TABLE claims ADD COLUMN origin_realm VARCHAR",
			"ALTER TABLE claims ADD COLUMN origin_claim VARCHAR",
			"ALTER TABLE claims ADD COLUMN origin_thread VARCHAR",
			"ALTER TABLE claim_stances ADD COLUMN origin_stance VARCHAR",
			"CREATE UNIQUE INDEX claims_origin_idx ON claims (origin_realm, origin_claim)",
			"CREATE UNIQUE INDEX claim_stances_origin_idx ON claim_stances (claim_id, origin_stance)",
		} {
			if _, err := tx.ExecContext(ctx, stmt); err != nil {
				return err
			}
		}
		return nil
	})
}
