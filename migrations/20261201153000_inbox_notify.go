package migrations

import (
	"context"

	"github.com/uptrace/bun"

	"github.com/parleyforum/parley/storage"
)

// On Postgres, every committed change of a thread's inbox position is announced on the
// channel parley_inbox, with whose turn it now is as the payload (an identity, or "*" for
// anyone). Waiting readers of every instance are woken by it instead of asking again and
// again. A trigger sends it, so the announcement is part of the writing transaction: it is
// delivered when, and only if, the change commits, whichever code path wrote it. SQLite has
// one writer process, which wakes its readers itself.
func init() {
	register(func(ctx context.Context, tx bun.Tx, kind storage.Kind) error {
		if kind != storage.Postgres {
			return nil
		}
		for _, stmt := range []string{
			`CREATE FUNCTION parley_announce_inbox() RETURNS trigger LANGUAGE plpgsql AS $$
			BEGIN
				IF NEW.inbox_to IS NOT NULL THEN
					PERFORM pg_notify('parley_inbox', NEW.inbox_to);
				END IF;
				RETURN NULL;
			END $$`,
			`CREATE TRIGGER threads_announce_inbox
				AFTER INSERT OR UPDATE OF inbox_seq ON threads
				FOR EACH ROW EXECUTE FUNCTION parley_announce_inbox()`,
		} {
			if _, err := tx.ExecContext(ctx, stmt); err != nil {
				return err
			}
		}
		return nil
	})
}
