package migrations

import (
	"context"

	"github.com/uptrace/bun"

	"github.com/parleyforum/parley/storage"
)

// On Postgres, every committed change of the tokens (a revocation above all) is announced on
// the channel parley_tokens, so that every instance drops the tokens it has verified and
// keeps in memory (storage's token cache) at once. A trigger sends it, so the announcement
// is part of the changing transaction, whichever code path or process (the server, the
// parley token command) made it, and is delivered when, and only if, it commits. A new
// token needs no announcement: no instance can hold it yet. SQLite keeps no such cache.
func init() {
	register(func(ctx context.Context, tx bun.Tx, kind storage.Kind) error {
		if kind != storage.Postgres {
			return nil
		}
		for _, stmt := range []string{
			`CREATE FUNCTION parley_announce_tokens() RETURNS trigger LANGUAGE plpgsql AS $$
			BEGIN
				PERFORM pg_notify('parley_tokens', '');
				RETURN NULL;
			END $$`,
			`CREATE TRIGGER tokens_announce
				AFTER UPDATE OR DELETE OR TRUNCATE ON tokens
				FOR EACH STATEMENT EXECUTE FUNCTION parley_announce_tokens()`,
		} {
			if _, err := tx.ExecContext(ctx, stmt); err != nil {
				return err
			}
		}
		return nil
	})
}
