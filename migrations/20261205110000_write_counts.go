package migrations

import (
	"context"

	"github.com/uptrace/bun"

	"github.com/parleyforum/parley/storage"
)

// On SQLite, each identity's count of the writes it has on record (write_times), kept by
// triggers, so that a write's check of writes_per_minute reads one row instead of counting
// every write of the minute: the write first removes its identity's records older than a
// minute, and then the records left are exactly those of the minute (storage's
// countWriteSQLite). Counting them cost a send as many index entries as the identity wrote in
// the last minute — 12,000 at 200 writes a second, under a limit raised for a load test.
// Postgres keeps the same row since the migration write_counts_postgres.
func init() {
	register(func(ctx context.Context, tx bun.Tx, kind storage.Kind) error {
		if kind != storage.SQLite {
			return nil
		}
		return execEach(ctx, tx,
			`CREATE TABLE write_counts (identity TEXT NOT NULL PRIMARY KEY, n INTEGER NOT NULL) WITHOUT ROWID`,
			`INSERT INTO write_counts (identity, n) SELECT identity, count(*) FROM write_times GROUP BY identity`,
			`CREATE TRIGGER write_counts_insert AFTER INSERT ON write_times BEGIN
				INSERT INTO write_counts (identity, n) VALUES (new.identity, 1)
					ON CONFLICT (identity) DO UPDATE SET n = n + 1;
			END`,
			`CREATE TRIGGER write_counts_delete AFTER DELETE ON write_times BEGIN
				UPDATE write_counts SET n = n - 1 WHERE identity = old.identity;
			END`,
		)
	})
}
