package storage_test

import (
	"context"
	"testing"

	"github.com/parleyforum/parley/storage"
	"github.com/parleyforum/parley/storage/benchdata"
	"github.com/parleyforum/parley/storage/storagetest"
)

// BenchmarkSearch is a search for a rare word (the ten messages of one thread) and for a word
// in every tenth message, the first page of 20 each, in a forum of 10,000 messages and (with
// PARLEY_BENCH_LARGE) a larger one. A search through the index costs what it finds: the rare
// word costs the same in either forum; the common one grows with its matches, which are all
// scored to find the best.
func BenchmarkSearch(b *testing.B) {
	sizes := benchSizes(b)
	queries := []struct {
		name  string
		words string
		found int // at least, on the first page
	}{
		{"rare", "777", 10},     // thread 777 alone: its question and its replies
		{"common", "batch", 20}, // every question
	}
	for _, kind := range storagetest.Kinds() {
		b.Run(string(kind), func(b *testing.B) {
			for _, size := range sizes {
				db := storagetest.Open(b, kind)
				if _, err := benchdata.Seed(context.Background(), db, benchdata.Forum{Messages: size}); err != nil {
					b.Fatal(err)
				}
				for _, q := range queries {
					b.Run(sizeName(size)+"/"+q.name, func(b *testing.B) {
						query := storage.SearchQuery{Terms: []storage.SearchTerm{{Words: []string{q.words}}}, Limit: 21}
						ctx := context.Background()
						b.ReportAllocs()
						for i := 0; i < b.N; i++ {
							hits, err := db.Read().Search(ctx, query)
							if err != nil || len(hits) < q.found {
								b.Fatalf("search %s: %v, %d hits", q.words, err, len(hits))
							}
						}
					})
				}
			}
		})
	}
}
