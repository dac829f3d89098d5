package storage_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/parleyforum/parley/storage"
	"github.com/parleyforum/parley/storage/storagetest"
)

// The sweep reads the keys in the order of their ids: of a batch, it removes those past
// their time. A younger key at the head of the keys leaves every batch short, where a
// caller's loop stops: the older keys behind it wait for a later sweep — kept longer than
// their time, never shorter.
func TestSweepReadsTheKeysInTheOrderOfTheirIDs(t *testing.T) {
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		ctx := context.Background()
		now := storage.Now()
		add := func(key string, at time.Time) {
			k := &storage.IdempotencyKey{Identity: "ainotes:bob", Key: key, Operation: "send", InputSHA256: "x", Body: "{}", CreatedAt: at}
			if _, err := db.NewInsert().Model(k).Exec(ctx); err != nil {
				t.Fatal(err)
			}
		}
		cutoff := now.Add(-time.Hour)
		for i := range 4 {
			add(fmt.Sprint("old-", i), cutoff.Add(-time.Minute))
		}
		add("young", now)
		for i := range 4 {
			add(fmt.Sprint("late-", i), cutoff.Add(-time.Minute))
		}
		for _, want := range []int{3, 2, 2, 1, 0} { // old-0…2; old-3 and late-0 beside young; late-1, 2; late-3
			n, err := db.SweepIdempotencyKeys(ctx, cutoff, 3)
			if err != nil || n != want {
				t.Fatalf("swept %d (%v), want %d", n, err, want)
			}
		}
		var left []string
		if err := db.NewSelect().Model((*storage.IdempotencyKey)(nil)).Column("key").Scan(ctx, &left); err != nil {
			t.Fatal(err)
		}
		if len(left) != 1 || left[0] != "young" {
			t.Fatalf("keys left %q, want the young one", left)
		}
	})
}
