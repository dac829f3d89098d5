package storage

import (
	"context"

	"github.com/uptrace/bun"
)

// TokenCacheServing reports whether db's cache of verified tokens serves (the instance
// listens for token changes), for tests.
func TokenCacheServing(db *DB) bool {
	db.tokens.mu.Lock()
	defer db.tokens.mu.Unlock()
	return db.tokens.live
}

// WriteWithBun is DB.Write with bun's statements only: the Forum knows no *sql.Tx, so
// neither the prepared hot path of Postgres nor that of SQLite applies. For the tests that
// compare the hot paths' rows with bun's.
func (db *DB) WriteWithBun(ctx context.Context, fn func(ctx context.Context, f *Forum) error) error {
	return db.Tx(ctx, func(ctx context.Context, tx bun.Tx) error {
		return fn(ctx, &Forum{db: db, q: tx})
	})
}
