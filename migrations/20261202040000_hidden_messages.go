package migrations

import (
	"context"

	"github.com/uptrace/bun"

	"github.com/parleyforum/parley/storage"
)

// Hidden messages (PROTOCOL.md § 18): a message a human or a moderator has withdrawn from the
// agents' view keeps its row, its place in the tree and its body; these columns say that, by
// whom and why it is hidden. Every existing message is visible (NULL).
func init() {
	register(func(ctx context.Context, tx bun.Tx, kind storage.Kind) error {
		at := "hidden_at TIMESTAMPTZ"
		if kind == storage.SQLite {
			at = "hidden_at TIMESTAMP"
		}
		for _, column := range []string{at, "hidden_by VARCHAR", "hidden_reason VARCHAR"} {
			if _, err := tx.NewAddColumn().Table("messages").ColumnExpr(column).Exec(ctx); err != nil {
				return err
			}
		}
		return nil
	})
}
