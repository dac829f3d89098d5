package migrations

import (
	"context"
	"crypto/rand"
	"encoding/base64"

	"github.com/uptrace/bun"

	"github.com/parleyforum/parley/storage"
)

// cursorKeySetting is a row of settings. Frozen copy; never edit it.
type cursorKeySetting struct {
	bun.BaseModel `bun:"table:settings"`

	Key   string `bun:"key,pk"`
	Value string `bun:"value,notnull"`
}

// The key every cursor is signed with (protocol/cursor.go): made here, once per database,
// so that every instance of one forum signs and checks cursors with the same key. Migrations
// queue behind each other, so concurrent first starts make one key; an existing key stays.
func init() {
	register(func(ctx context.Context, tx bun.Tx, _ storage.Kind) error {
		key := make([]byte, 32)
		if _, err := rand.Read(key); err != nil {
			return err
		}
		_, err := tx.NewInsert().Model(&cursorKeySetting{Key: "cursor_key", Value: base64.StdEncoding.EncodeToString(key)}).
			On("CONFLICT (key) DO NOTHING").Exec(ctx)
		return err
	})
}
