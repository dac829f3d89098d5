package migrations

import (
	"context"

	"github.com/uptrace/bun"

	"github.com/parleyforum/parley/storage"
)

// On Postgres too, each identity's count of the writes it has on record (write_times), kept
// by a trigger, so that a write's check of writes_per_minute reads one row instead of
// counting every write of the minute (storage's write_rate.go and reply_pg.go). Counting them
// was the most expensive part of a send's statement under load: 2,500 index entries at 42
// writes a second per identity, under a limit raised for a load test. The table is locked
// while the count is taken from the records and the trigger created, so that no write of
// another instance falls between them.
func init() {
	register(func(ctx context.Context, tx bun.Tx, kind storage.Kind) error {
		if kind != storage.Postgres {
			return nil
		}
		return execEach(ctx, tx,
			`LOCK TABLE write_times IN SHARE ROW EXCLUSIVE MODE`,
			`CREATE TABLE write_counts (identity TEXT NOT NULL PRIMARY KEY, n BIGINT NOT NULL)`,
			`INSERT INTO write_counts (identity, n) SELECT identity, count(*) FROM write_times GROUP BY identity`,
			`CREATE FUNCTION parley_write_counts() RETURNS trigger LANGUAGE plpgsql AS $$
			BEGIN
				IF TG_OP = 'INSERT' THEN
					INSERT INTO write_counts (identity, n) VALUES (NEW.identity, 1)
						ON CONFLICT (identity) DO UPDATE SET n = write_counts.n + 1;
				ELSE
					UPDATE write_counts SET n = n - 1 WHERE identity = OLD.identity;
				END IF;
				RETURN NULL;
			END $$`,
			`CREATE TRIGGER write_counts_follow AFTER INSERT OR DELETE ON write_times
				FOR EACH ROW EXECUTE FUNCTION parley_write_counts()`,
		)
	})
}
