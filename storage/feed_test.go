package storage_test

import (
	"context"
	"testing"
	"time"

	"github.com/parleyforum/parley/storage"
	"github.com/parleyforum/parley/storage/storagetest"
)

// The feed holds every message and event written, in the order written, each once, and a
// read after the horizon finds nothing until something new is written.
func TestFeedRecordsWritesInOrder(t *testing.T) {
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		ctx := context.Background()
		read := db.Read()
		_, start, err := read.Feed(ctx, storage.FeedQuery{})
		if err != nil {
			t.Fatal(err)
		}
		var want []string
		err = db.Write(ctx, func(ctx context.Context, f *storage.Forum) error {
			now := storage.Now()
			th := &storage.Thread{Title: "t", State: "open", StateOrigin: "llm", ConfirmedState: "open", Creator: "ainotes:a", CreatedAt: now, UpdatedAt: now}
			if err := f.InsertThread(ctx, th); err != nil {
				return err
			}
			for i := 0; i < 3; i++ {
				m := &storage.Message{ThreadID: th.ID, Kind: "note", Identity: "ainotes:a", AuthorKind: "llm", Body: "b", CreatedAt: now}
				if err := f.InsertMessage(ctx, m); err != nil {
					return err
				}
				e := &storage.Event{ThreadID: th.ID, Subject: "th_1", Act: "note", ToState: "open", Origin: "llm", ActorIdentity: "ainotes:a", Label: "l", At: now}
				if err := f.InsertEvent(ctx, e); err != nil {
					return err
				}
				want = append(want, "m", "e")
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		// The feed shows what committed below the oldest write still running on the server:
		// on a Postgres server shared with other tests, wait for theirs to end.
		items, horizon, err := read.Feed(ctx, storage.FeedQuery{After: start, Limit: 100})
		for deadline := time.Now().Add(30 * time.Second); err == nil && len(items) < len(want) && time.Now().Before(deadline); {
			time.Sleep(50 * time.Millisecond)
			items, horizon, err = read.Feed(ctx, storage.FeedQuery{After: start, Limit: 100})
		}
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for i, it := range items {
			switch {
			case it.Message != nil && it.Event == nil && it.Message.ID > 0:
				got = append(got, "m")
			case it.Event != nil && it.Message == nil && it.Event.ID > 0:
				got = append(got, "e")
			}
			if i > 0 && !items[i-1].Position.Less(it.Position) {
				t.Errorf("item %d at %v is not after %v", i, it.Position, items[i-1].Position)
			}
		}
		if len(got) != len(want) || len(items) != len(want) {
			t.Fatalf("feed %v, want %v", got, want)
		}
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("feed %v, want %v", got, want)
			}
		}
		if horizon.Less(items[len(items)-1].Position) {
			t.Errorf("horizon %v below the last item %v", horizon, items[len(items)-1].Position)
		}
		page, _, err := read.Feed(ctx, storage.FeedQuery{After: start, Limit: 2})
		if err != nil || len(page) != 2 || page[1].Position != items[1].Position {
			t.Errorf("a page of 2: %v %v", page, err)
		}
		rest, _, err := read.Feed(ctx, storage.FeedQuery{After: items[len(items)-1].Position, Limit: 100})
		if err != nil || len(rest) != 0 {
			t.Errorf("after the last: %v %v", rest, err)
		}
	})
}
