package storage

// TokenCacheServing reports whether db's cache of verified tokens serves (the instance
// listens for token changes), for tests.
func TokenCacheServing(db *DB) bool {
	db.tokens.mu.Lock()
	defer db.tokens.mu.Unlock()
	return db.tokens.live
}
