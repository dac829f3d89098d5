package storage_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/parleyforum/parley/storage"
	"github.com/parleyforum/parley/storage/storagetest"
)

// A write's count of its identity's writes of the minute is a row of write_counts, kept by
// triggers on write_times: through writes accepted, refused at the limit and accepted again
// once the oldest leave the minute, for two identities, the row equals the records' count,
// and the limit holds as the records say — on both databases, for each way a write is
// counted: CountWrite inside a write (prepared), CountWrite outside one (bun's statements),
// and the count inside a message's write (MessageWrite.Count; on Postgres its one statement).
func TestWriteCountsFollowTheRecords(t *testing.T) {
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		for _, way := range []string{"in a write", "outside a write", "in a message's write"} {
			t.Run(way, func(t *testing.T) { writeCountsFollowTheRecords(t, db, way) })
		}
	})
}

func writeCountsFollowTheRecords(t *testing.T, db *storage.DB, way string) {
	ctx := context.Background()
	const limit = 3
	t0 := storage.Now()
	threads := map[string]*storage.Thread{}
	// count answers whether the write was accepted, and if not when the limit frees it.
	count := func(identity string, at time.Time) (bool, time.Time) {
		t.Helper()
		identity += " " + way
		switch way {
		case "outside a write":
			free, ok, err := db.Read().CountWrite(ctx, identity, 0, at, limit)
			if err != nil {
				t.Fatal(err)
			}
			return ok, free
		case "in a message's write":
			th, ok := threads[identity]
			if !ok {
				th = openCountedThread(t, db, identity, t0.Add(-time.Hour))
				threads[identity] = th
			}
			err := db.Write(ctx, func(ctx context.Context, f *storage.Forum) error {
				got, err := f.ThreadForUpdate(ctx, th.ID)
				if err != nil {
					return err
				}
				got.MessageCount++
				m := &storage.Message{ThreadID: got.ID, ParentID: got.RootMessageID, AskID: got.RootMessageID,
					Depth: 1, Kind: "note", Identity: identity, AuthorKind: "llm", Body: "N", CreatedAt: at}
				return f.WriteMessage(ctx, storage.MessageWrite{Message: m, Thread: got,
					Count: &storage.WriteCount{Identity: identity, Now: at, Limit: limit}})
			})
			var limited *storage.WriteLimited
			if errors.As(err, &limited) {
				return false, limited.Free
			}
			if err != nil {
				t.Fatal(err)
			}
			return true, time.Time{}
		}
		var ok bool
		var free time.Time
		err := db.Write(ctx, func(ctx context.Context, f *storage.Forum) error {
			var err error
			free, ok, err = f.CountWrite(ctx, identity, 0, at, limit)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		return ok, free
	}
	accepted := map[string][]time.Time{}
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
		at := t0.Add(c.after)
		got, free := count(c.identity, at)
		if got != c.want {
			t.Fatalf("write %d, %s at +%v: accepted %v, want %v", i, c.identity, c.after, got, c.want)
		}
		if got {
			accepted[c.identity] = append(accepted[c.identity], at)
		} else {
			// Free when the oldest write of the minute before leaves it.
			var want time.Time
			for _, a := range accepted[c.identity] {
				if a.After(at.Add(-time.Minute)) {
					want = a.Add(time.Minute)
					break
				}
			}
			if !free.Equal(want) {
				t.Fatalf("write %d, %s at +%v: refused until %v, want %v", i, c.identity, c.after, free, want)
			}
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

// openCountedThread opens a thread of identity at at, outside the count, for notes to go into.
func openCountedThread(t *testing.T, db *storage.DB, identity string, at time.Time) *storage.Thread {
	t.Helper()
	th := &storage.Thread{Title: "Q", State: "open", StateOrigin: "llm", ConfirmedState: "open",
		Creator: identity, CreatedAt: at, UpdatedAt: at}
	err := db.Write(context.Background(), func(ctx context.Context, f *storage.Forum) error {
		if err := f.OpenThread(ctx, th, identity); err != nil {
			return err
		}
		m := &storage.Message{ThreadID: th.ID, Kind: "ask", Identity: identity, AuthorKind: "llm",
			Body: "Q", CreatedAt: at, AwaitingMode: storage.AwaitingAny, AwaitingIdentity: identity}
		th.MessageCount = 1
		return f.WriteMessage(ctx, storage.MessageWrite{Message: m, Thread: th, Opens: true, AwaitedBySelf: true})
	})
	if err != nil {
		t.Fatal(err)
	}
	return th
}
