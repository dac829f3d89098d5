package main

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/parleyforum/parley/storage"
	"github.com/parleyforum/parley/storage/storagetest"
)

// losing is a sender whose every write's first answer does not come (as if the connection
// broke after the server wrote it); it records every key it was sent.
type losing struct {
	mu   sync.Mutex
	sent map[string]int
}

func (l *losing) do(_ context.Context, _ int, st step) outcome {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.sent[st.key]++
	if l.sent[st.key] == 1 {
		return outcome{reason: "transport_error"}
	}
	return outcome{accepted: true, id: int64(len(l.sent)), root: int64(len(l.sent))}
}

// A write whose answer did not come is sent again, under the same key, before anything else,
// even past the budget: every key twice, none three times, and every write has one.
func TestRetriesReuseTheirKey(t *testing.T) {
	l := &losing{sent: map[string]int{}}
	b := newBoard(3)
	b.keys = "load-test-"
	c := &config{agents: 3, requests: 60, rounds: 1, duration: time.Minute, mix: &mix{ops: []string{opSend}, weights: []int{1}, total: 1}}
	m := &mode{name: modeHTTP, sender: l, board: b, stats: newStats()}
	if err := phase(context.Background(), c, m); err != nil {
		t.Fatal(err)
	}
	// Every first answer is lost, so each request begun is a write sent twice, the last ones
	// too: a retry is never cut off by the budget, whichever agent spent it.
	if len(l.sent) != 60 {
		t.Errorf("60 requests begun sent %d keys, want 60 writes each sent twice", len(l.sent))
	}
	for key, n := range l.sent {
		if !strings.HasPrefix(key, "load-test-") || n != 2 {
			t.Errorf("key %q sent %d times", key, n)
		}
	}
}

// Over both transports every write the load tool sends carries its key: the server keeps one
// for every message; with --keys=false none.
func TestEveryWriteCarriesAKey(t *testing.T) {
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		url := startServer(t, db)
		count := func(sql string) int {
			var n int
			if err := db.NewRaw(sql).Scan(context.Background(), &n); err != nil {
				t.Fatal(err)
			}
			return n
		}
		runJSON(t, "--url", url, "--db", db.URL(), "--modes", "http,mcp", "--agents", "2", "--requests", "40", "--rounds", "1")
		messages, keys := count("SELECT COUNT(*) FROM messages"), count("SELECT COUNT(*) FROM idempotency_keys WHERE operation = 'send' AND key LIKE 'load-%'")
		if messages != 80 || keys != messages {
			t.Errorf("%d messages written, %d idempotency keys kept; want 80 of each", messages, keys)
		}
		runJSON(t, "--url", url, "--db", db.URL(), "--modes", "http", "--agents", "2", "--requests", "10", "--rounds", "1", "--keys=false")
		if n := count("SELECT COUNT(*) FROM idempotency_keys"); n != keys {
			t.Errorf("--keys=false: %d keys, want still %d", n, keys)
		}
	})
}
