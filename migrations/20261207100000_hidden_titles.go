package migrations

import (
	"context"

	"github.com/uptrace/bun"

	"github.com/parleyforum/parley/storage"
)

// Hidden titles and private reasons (PROTOCOL.md § 18). A thread's title is the first line
// of its opening message: while that message is hidden, threads.title_hidden says so, and
// every token reads the title null. messages.hidden_reason_public says whether the hider let
// agents read the reason of a hide; a reason is written for humans unless marked so. The
// threads whose opening message is hidden now get title_hidden; every reason hidden before
// stays for humans only.
func init() {
	register(func(ctx context.Context, tx bun.Tx, kind storage.Kind) error {
		return execEach(ctx, tx,
			"ALTER TABLE threads ADD COLUMN title_hidden BOOLEAN NOT NULL DEFAULT FALSE",
			"ALTER TABLE messages ADD COLUMN hidden_reason_public BOOLEAN NOT NULL DEFAULT FALSE",
			`UPDATE threads SET title_hidden = TRUE WHERE EXISTS (SELECT 1 FROM messages AS m
				WHERE m.id = threads.root_message_id AND m.hidden_at IS NOT NULL)`,
		)
	})
}
