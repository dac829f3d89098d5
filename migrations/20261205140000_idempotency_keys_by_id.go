package migrations

import (
	"context"

	"github.com/uptrace/bun"

	"github.com/parleyforum/parley/storage"
)

// The idempotency keys lose their index on created_at: the sweep reads the oldest keys in the
// order of their ids instead (storage.SweepIdempotencyKeys), which their times follow. The
// index was one page more that every keyed write changed and wrote at its commit — on SQLite
// one page of the 28 a keyed send writes to the log (BenchmarkSendWAL).
func init() {
	register(func(ctx context.Context, tx bun.Tx, _ storage.Kind) error {
		return execEach(ctx, tx, `DROP INDEX idempotency_keys_created_at_idx`)
	})
}
