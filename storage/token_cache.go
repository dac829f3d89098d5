package storage

import (
	"sync"
	"time"
)

// tokenCache keeps the agent tokens this instance has verified, so that a request does not
// read its token from the database again (one round trip of a send's five). It serves only
// while the instance listens for token changes (the channel tokensChannel, announced by a
// trigger on every committed change of the tokens): each announcement empties it, and so
// does losing the listening connection, after which it serves nothing until it listens
// again. A revoked token is therefore refused by every instance once the announcement
// arrives — milliseconds after the revocation commits — and no write waits even that long:
// every agent write checks its token again in its own transaction (WriteCount.Token).
//
// A human's personal token is never kept: a human's writes are not counted, and the count is
// where a write checks its token.
type tokenCache struct {
	mu      sync.Mutex
	live    bool   // listening: announcements of token changes arrive
	gen     uint64 // changes with every emptying, so that a read begun before it keeps nothing
	entries map[string]cachedToken
}

type cachedToken struct {
	token Token
	at    time.Time
}

// tokenCacheTTL bounds how long a verified token is kept even without any announcement.
const tokenCacheTTL = time.Minute

// tokenCacheMax bounds the tokens kept; only verified live tokens are, so reaching it takes
// that many real tokens in use within a minute.
const tokenCacheMax = 10000

func newTokenCache() *tokenCache { return &tokenCache{entries: map[string]cachedToken{}} }

// get returns the token kept for hash, if the cache serves and holds a fresh one, and
// otherwise the generation to pass to put after reading it from the database.
func (c *tokenCache) get(hash string, now time.Time) (Token, bool, uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.entries[hash]; ok && c.live && now.Sub(e.at) < tokenCacheTTL {
		return e.token, true, c.gen
	}
	return Token{}, false, c.gen
}

// put keeps a token read from the database, unless the cache was emptied since the read
// began (gen): what was read may be what a revocation since has changed.
func (c *tokenCache) put(t *Token, gen uint64, now time.Time) {
	if t.Human || t.RevokedAt != nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.live || gen != c.gen {
		return
	}
	if len(c.entries) >= tokenCacheMax {
		clear(c.entries)
	}
	c.entries[t.SecretHash] = cachedToken{token: *t, at: now}
}

// reset empties the cache and says whether it may serve from now on: live once the instance
// listens for token changes, not live when it stops or loses its connection.
func (c *tokenCache) reset(live bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	clear(c.entries)
	c.gen++
	c.live = live
}

// drop empties the cache and serves on as before: a change this instance made itself.
func (c *tokenCache) drop() {
	c.mu.Lock()
	defer c.mu.Unlock()
	clear(c.entries)
	c.gen++
}
