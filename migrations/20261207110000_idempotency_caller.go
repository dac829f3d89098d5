package migrations

import (
	"context"

	"github.com/uptrace/bun"

	"github.com/parleyforum/parley/storage"
)

// An idempotency key keeps what its writer could do — its rights and the rooms its token is
// scoped to — so that a replay answers only a caller who could make the same request now
// (PROTOCOL.md § 19 "Replays keep their scope"). Keys written before keep an empty caller: a
// replay of them is given only to a request that passes every check again.
func init() {
	register(func(ctx context.Context, tx bun.Tx, _ storage.Kind) error {
		return execEach(ctx, tx, `ALTER TABLE idempotency_keys ADD COLUMN caller text NOT NULL DEFAULT ''`)
	})
}
