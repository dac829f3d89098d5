package migrations

import (
	"context"

	"github.com/uptrace/bun"

	"github.com/parleyforum/parley/storage"
)

// On Postgres, a room's creation is announced as a token's change is (on parley_tokens, see
// the token_notify migration): a token scoped to a room reaches the rooms inside it, and the
// instances keep each verified token with the rooms it reaches (storage's token cache). A room
// created inside a token's room is then reached by that token on every instance as soon as
// the announcement arrives. Only an insert changes what a token reaches — a room's parent
// never changes and rooms are archived, not deleted — but every change is announced, so
// that the cache never depends on that staying true.
func init() {
	register(func(ctx context.Context, tx bun.Tx, kind storage.Kind) error {
		if kind != storage.Postgres {
			return nil
		}
		_, err := tx.ExecContext(ctx, `CREATE TRIGGER rooms_announce
			AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON rooms
			FOR EACH STATEMENT EXECUTE FUNCTION parley_announce_tokens()`)
		return err
	})
}
