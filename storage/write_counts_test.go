package storage_test

import (
	"context"
	"testing"
	"time"

	"github.com/parleyforum/parley/storage"
	"github.com/parleyforum/parley/storage/storagetest"
)

// On SQLite a write's count of its identity's writes of the minute is a row of write_counts,
// kept by triggers on write_times: through writes accepted, refused at the limit and accepted
// again once the oldest leave the minute, for two identities, the row equals the records'
// count, and the limit holds as the records say.
func TestWriteCountsFollowTheRecords(t *testing.T) {
	db := storagetest.Open(t, storage.SQLite)
	ctx := context.Background()
	const limit = 3
	t0 := storage.Now()
	count := func(identity string, at time.Time) bool {
		t.Helper()
		var ok bool
		err := db.Write(ctx, func(ctx context.Context, f *storage.Forum) error {
			var err error
			_, ok, err = f.CountWrite(ctx, identity, 0, at, limit)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}
	for i, c := range []struct {
		identity string
		after    time.Duration
		want     bool
	}{
		{"ainotes:a", 0, true},
		{"ainotes:a", time.Second, true},
		{"ainotes:b", time.Second, true},
		{"ainotes:a", 2 * time.Second, true},
		{"ainotes:a", 3 * time.Second, false}, // three in the minute
		{"ainotes:b", 3 * time.Second, true},
		{"ainotes:a", 60 * time.Second, true},  // the first leaves the minute at +60 s: (now − 1 min, now]
		{"ainotes:a", 60 * time.Second, false}, // those of +1 s, +2 s and +60 s
		{"ainotes:a", 62 * time.Second, true},  // +1 s and +2 s have left
		{"ainotes:a", 62 * time.Second, true},
		{"ainotes:a", 62 * time.Second, false},
		{"ainotes:b", 200 * time.Second, true}, // both of b's have left
	} {
		if got := count(c.identity, t0.Add(c.after)); got != c.want {
			t.Fatalf("write %d, %s at +%v: accepted %v, want %v", i, c.identity, c.after, got, c.want)
		}
		var mismatched int
		err := db.NewRaw(`SELECT count(*) FROM (SELECT identity, count(*) AS n FROM write_times GROUP BY identity) AS r
			FULL JOIN write_counts AS c USING (identity) WHERE coalesce(r.n, 0) <> coalesce(c.n, 0)`).Scan(ctx, &mismatched)
		if err != nil {
			t.Fatal(err)
		}
		if mismatched != 0 {
			t.Fatalf("after write %d, write_counts differs from the records for %d identities", i, mismatched)
		}
	}
}
