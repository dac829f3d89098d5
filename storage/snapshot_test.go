package storage_test

import (
	"context"
	"testing"

	"github.com/parleyforum/parley/storage"
	"github.com/parleyforum/parley/storage/storagetest"
)

// SnapshotTime fixes the snapshot before it reads the clock: a thread written and committed
// after it is not in the snapshot, and every thread that is was stamped at or before the time
// answered. A clock read before the snapshot's first read would let a thread written in
// between in, younger than the time (3 of 354 datasets under load held rows after their
// exported_at).
func TestSnapshotTimeIsNoOlderThanAnyRowOfTheSnapshot(t *testing.T) {
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		ctx := context.Background()
		write := func(title string) {
			t.Helper()
			if err := db.Write(ctx, func(ctx context.Context, f *storage.Forum) error {
				now := storage.Now()
				return f.InsertThread(ctx, &storage.Thread{Title: title, State: "open", StateOrigin: "llm",
					ConfirmedState: "open", Creator: "ainotes:a", CreatedAt: now, UpdatedAt: now, RoomID: 1})
			}); err != nil {
				t.Fatal(err)
			}
		}
		write("before")
		err := db.Snapshot(ctx, func(ctx context.Context, f *storage.Forum) error {
			at, err := f.SnapshotTime(ctx)
			if err != nil {
				return err
			}
			write("after") // committed beside the snapshot, once its time is taken
			threads, err := f.ThreadsPage(ctx, "", 0, 10)
			if err != nil {
				return err
			}
			if len(threads) != 1 || threads[0].Title != "before" {
				t.Errorf("the snapshot holds %d threads: want only the one written before it", len(threads))
			}
			for _, th := range threads {
				if th.CreatedAt.After(at) {
					t.Errorf("thread %q of the snapshot was stamped %s, after the snapshot's time %s", th.Title, th.CreatedAt, at)
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	})
}
