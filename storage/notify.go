package storage

import (
	"context"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
)

// Changes is the signal that an inbox or the feed may have changed: whoever waits for news
// (an inbox long poll, a feed) waits here instead of asking the database again and again,
// and reads from the database, by its cursor, when woken. The signal carries no data, only
// whose turn changed, so a missed or an extra wake-up never loses or invents anything: an
// extra one costs one read, and every wait is bounded by its own time.
//
// Writers of this process publish after they commit. On Postgres the database also
// announces every commit that moves an inbox position (NOTIFY on inboxChannel, sent by a
// trigger, so only committed changes are announced, by whichever instance made them), and
// every commit that adds to the feed (on feedChannel); one connection per DB listens to both,
// opened when the first waiter comes, and relays them here.
type Changes struct {
	mu      sync.Mutex
	byKey   map[string]chan struct{} // waiters for one identity's turns
	all     chan struct{}            // waiters for any change
	feed    chan struct{}            // waiters for the feed
	listen  func(context.Context)    // nil: nothing to listen to (SQLite)
	started sync.Once
	stop    context.CancelFunc
	stopped chan struct{}
	heard   bool // the listening connection listens, and its first wake-up is done
}

// AnyKey stands for every waiter: turns open to anyone, and changes whose key is unknown.
const AnyKey = ""

func newChanges() *Changes {
	return &Changes{byKey: map[string]chan struct{}{}, all: make(chan struct{}), feed: make(chan struct{})}
}

// WaitFeed returns a channel that is closed when the feed may have grown.
func (c *Changes) WaitFeed() <-chan struct{} {
	c.startListening()
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.feed
}

// PublishFeed wakes the waiters of the feed.
func (c *Changes) PublishFeed() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.publishFeedLocked()
}

func (c *Changes) publishFeedLocked() {
	close(c.feed)
	c.feed = make(chan struct{})
}

// Wait returns a channel that is closed at the next change of key's turns (an identity), or
// of anyone's.
func (c *Changes) Wait(key string) <-chan struct{} {
	c.startListening()
	c.mu.Lock()
	defer c.mu.Unlock()
	if key == AnyKey {
		return c.all
	}
	ch, ok := c.byKey[key]
	if !ok {
		ch = make(chan struct{})
		c.byKey[key] = ch
	}
	return ch
}

// Publish wakes the waiters of key (an identity whose turn it now is), and every waiter (the
// feed's too) when key is AnyKey.
func (c *Changes) Publish(key string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if key != AnyKey {
		if ch, ok := c.byKey[key]; ok {
			close(ch)
			delete(c.byKey, key)
		}
		return
	}
	close(c.all)
	c.all = make(chan struct{})
	c.publishFeedLocked()
	for k, ch := range c.byKey {
		close(ch)
		delete(c.byKey, k)
	}
}

// Waiting is the number of identities waited for since they were last woken, for tests.
func (c *Changes) Waiting() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.byKey)
}

func (c *Changes) startListening() {
	if c.listen == nil {
		return
	}
	c.started.Do(func() {
		ctx, cancel := context.WithCancel(context.Background())
		c.mu.Lock()
		c.stop, c.stopped = cancel, make(chan struct{})
		c.mu.Unlock()
		go func() {
			defer close(c.stopped)
			c.listen(ctx)
		}()
	})
}

func (c *Changes) setListening(on bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.heard = on
}

// Listening reports whether the database's announcements are heard right now, the wake-up of
// every waiter that listening again begins with done: from then on a waiter is woken by
// changes alone. Always false on SQLite, which announces nothing.
func (c *Changes) Listening() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.heard
}

// close stops the listening connection, if one was opened.
func (c *Changes) close() {
	c.started.Do(func() {}) // no listening from now on
	c.mu.Lock()
	stop, stopped := c.stop, c.stopped
	c.mu.Unlock()
	if stop != nil {
		stop()
		<-stopped
	}
}

// inboxChannel is the Postgres channel that announces inbox changes; the payload is the
// identity whose turn it now is, or InboxAny.
const inboxChannel = "parley_inbox"

// feedChannel is the Postgres channel that announces a commit that added to the feed.
const feedChannel = "parley_feed"

// tokensChannel is the Postgres channel that announces a committed change of the tokens (see
// tokenCache).
const tokensChannel = "parley_tokens"

// relistenAfter is how long the listener waits before it connects again after it lost its
// connection.
const relistenAfter = time.Second

// listenPostgres relays the database's announcements to c until ctx ends, connecting again
// a second after the connection is lost or cannot be made. Each time it listens again it
// wakes every waiter once: what was announced while nobody listened is read again. While it
// cannot listen, waiters are woken by this instance's own writes alone, and otherwise wait
// out their time.
func (db *DB) listenPostgres(ctx context.Context, c *Changes) {
	for ctx.Err() == nil {
		db.listenOnce(ctx, c)
		select {
		case <-ctx.Done():
		case <-time.After(relistenAfter):
		}
	}
}

func (db *DB) listenOnce(ctx context.Context, c *Changes) {
	conn, err := db.listeningConnection(ctx)
	if err != nil {
		return
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(ctx, "LISTEN "+inboxChannel+"; LISTEN "+feedChannel+"; LISTEN "+tokensChannel); err != nil {
		return
	}
	// From here on every change of the tokens is heard: the verified tokens may be kept, and
	// until the connection is lost (the deferred reset) they are.
	db.tokens.reset(true)
	defer db.tokens.reset(false)
	c.Publish(AnyKey)
	c.setListening(true)
	defer c.setListening(false)
	for {
		n, err := conn.WaitForNotification(ctx)
		if err != nil {
			return
		}
		switch {
		case n.Channel == tokensChannel:
			db.tokens.reset(true)
		case n.Channel == feedChannel:
			c.PublishFeed()
		case n.Payload == InboxAny:
			c.Publish(AnyKey)
		default:
			c.Publish(n.Payload)
		}
	}
}

// listeningConnection opens the one connection an instance listens on: the only place that
// opens it. It has no statement timeout, since it waits by design.
func (db *DB) listeningConnection(ctx context.Context) (*pgx.Conn, error) {
	url := db.url
	if db.listenURL != "" {
		url = db.listenURL
	}
	cfg, err := pgConfig(url, Options{})
	if err != nil {
		return nil, err
	}
	return pgx.ConnectConfig(ctx, cfg)
}
