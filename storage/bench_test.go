package storage_test

// Benchmarks of the storage queries alone, without the protocol around them. They measure;
// they assert nothing about time. docs/performance.md tells how to run them.

import (
	"context"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/parleyforum/parley/storage"
	"github.com/parleyforum/parley/storage/benchdata"
	"github.com/parleyforum/parley/storage/storagetest"
)

// envBenchLarge is protocol's EnvBenchLarge: 1 adds the forum of 1,000,000 messages.
const envBenchLarge = "PARLEY_BENCH_LARGE"

// inboxForum is a seeded forum and a cursor under which a few of the reader's threads lie.
type inboxForum struct {
	db    *storage.DB
	query storage.InboxQuery
	items int
}

// newInboxForum seeds a forum of the given size and places the cursor before its last 50
// threads: every tenth thread is unanswered and open to anyone, so 5 of them are new to the
// reader.
func newInboxForum(b *testing.B, kind storage.Kind, messages int) *inboxForum {
	ctx := context.Background()
	db := storagetest.Open(b, kind)
	if _, err := benchdata.Seed(ctx, db, benchdata.Forum{Messages: messages}); err != nil {
		b.Fatal(err)
	}
	// Other transactions on the same Postgres server can hold the read horizon behind the seed.
	if err := db.AwaitHorizon(ctx, time.Minute); err != nil {
		b.Fatal(err)
	}
	var after storage.Position
	err := db.NewRaw(`SELECT inbox_tx, inbox_seq FROM threads
		ORDER BY inbox_tx DESC, inbox_seq DESC LIMIT 1 OFFSET 50`).Scan(ctx, &after.Tx, &after.Seq)
	if err != nil {
		b.Fatal(err)
	}
	f := &inboxForum{db: db, query: storage.InboxQuery{
		Identity: benchdata.Agent("ainotes", 7), After: after, Limit: 51,
	}}
	items, _, err := db.Read().Inbox(ctx, f.query)
	if err != nil {
		b.Fatal(err)
	}
	if f.items = len(items); f.items != 5 {
		b.Fatalf("%d items after the cursor, want 5", f.items)
	}
	return f
}

// BenchmarkInboxQuery is the inbox's query for a reader with a few new items, in a forum of
// 10,000 messages and (with PARLEY_BENCH_LARGE=1) of 1,000,000.
func BenchmarkInboxQuery(b *testing.B) {
	sizes := benchSizes(b)
	for _, kind := range storagetest.Kinds() {
		b.Run(string(kind), func(b *testing.B) {
			for _, size := range sizes {
				f := newInboxForum(b, kind, size)
				b.Run(sizeName(size), func(b *testing.B) {
					ctx := context.Background()
					b.ReportAllocs()
					for i := 0; i < b.N; i++ {
						items, _, err := f.db.Read().Inbox(ctx, f.query)
						if err != nil || len(items) != f.items {
							b.Fatalf("inbox: %v, %d items", err, len(items))
						}
					}
				})
			}
		})
	}
}

// BenchmarkMessages reads the messages of a thread of 200, as reading a thread does.
func BenchmarkMessages(b *testing.B) {
	for _, kind := range storagetest.Kinds() {
		b.Run(string(kind), func(b *testing.B) {
			db := storagetest.Open(b, kind)
			if _, err := benchdata.Seed(context.Background(), db, benchdata.Forum{Messages: 2000, ThreadSize: 200, Agents: 200}); err != nil {
				b.Fatal(err)
			}
			ctx := context.Background()
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				msgs, err := db.Read().Messages(ctx, 5)
				if err != nil || len(msgs) != 200 {
					b.Fatalf("messages: %v, %d", err, len(msgs))
				}
			}
		})
	}
}

// benchSizes are the forums a benchmark seeds: 10,000 messages, and with PARLEY_BENCH_LARGE
// 1,000,000 (1) or the number it gives.
func benchSizes(b *testing.B) []int {
	sizes := []int{10_000}
	switch v := os.Getenv(envBenchLarge); v {
	case "", "0":
	case "1":
		sizes = append(sizes, 1_000_000)
	default:
		n, err := strconv.Atoi(v)
		if err != nil || n < 10_000 {
			b.Fatalf("%s=%q: want 1 or a number of messages of at least 10000", envBenchLarge, v)
		}
		sizes = append(sizes, n)
	}
	return sizes
}

func sizeName(n int) string {
	switch {
	case n%1_000_000 == 0:
		return strconv.Itoa(n/1_000_000) + "M"
	case n%1000 == 0:
		return strconv.Itoa(n/1000) + "k"
	}
	return strconv.Itoa(n)
}
