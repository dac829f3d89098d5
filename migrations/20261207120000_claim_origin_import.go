package migrations

import (
	"context"

	"github.com/uptrace/bun"

	"github.com/parleyforum/parley/storage"
)

// An import keeps what it carries (PROTOCOL.md § 14): an imported claim keeps its own
// created_at, and the import's time is recorded apart, as origin.imported_at; the realm
// whose export brought the claim here first is kept too, because only that realm's export
// and the claim's own realm's may change it later. Claims imported before kept the import's
// time as their created_at, so that is their imported_at; which export brought them is not
// known any more, and their own realm's is the likeliest.
func init() {
	register(func(ctx context.Context, tx bun.Tx, kind storage.Kind) error {
		at := "origin_imported_at TIMESTAMPTZ"
		if kind == storage.SQLite {
			at = "origin_imported_at TIMESTAMP"
		}
		return execEach(ctx, tx,
			"ALTER TABLE claims ADD COLUMN "+at,
			"ALTER TABLE claims ADD COLUMN origin_via VARCHAR",
			"UPDATE claims SET origin_imported_at = created_at, origin_via = origin_realm WHERE origin_realm IS NOT NULL",
		)
	})
}
