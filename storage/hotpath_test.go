package storage_test

import (
	"context"
	"testing"

	"github.com/parleyforum/parley/storage"
	"github.com/parleyforum/parley/storage/storagetest"
)

// The hot path of a send on Postgres (reply_pg.go) is prepared once per connection and then
// reused: more replies prepare nothing more.
func TestPostgresHotPathIsPreparedOnce(t *testing.T) {
	db := storagetest.Open(t, storage.Postgres)
	db.SetMaxOpenConns(1) // one connection, so one session's prepared statements
	ctx := context.Background()
	now := storage.Now()
	var th storage.Thread
	err := db.Write(ctx, func(ctx context.Context, f *storage.Forum) error {
		th = storage.Thread{Title: "Q", State: "open", StateOrigin: "llm", ConfirmedState: "open",
			Creator: "ainotes:a", CreatedAt: now, UpdatedAt: now}
		if err := f.InsertThread(ctx, &th); err != nil {
			return err
		}
		m := &storage.Message{ThreadID: th.ID, Kind: "ask", Identity: "ainotes:a", AuthorKind: "llm",
			Body: "Q", CreatedAt: now, AwaitingMode: storage.AwaitingAny, AwaitingIdentity: "ainotes:a"}
		th.MessageCount = 1
		return f.WriteMessage(ctx, storage.MessageWrite{Message: m, Thread: &th, Opens: true,
			AwaitedBySelf: true, MoveInbox: true})
	})
	if err != nil {
		t.Fatal(err)
	}
	reply := func(i int) {
		t.Helper()
		err := db.Write(ctx, func(ctx context.Context, f *storage.Forum) error {
			p, th, err := f.ParentAndThreadForUpdate(ctx, *th.RootMessageID, 0, "")
			if err != nil {
				return err
			}
			m := &storage.Message{ThreadID: th.ID, ParentID: &p.ID, AskID: &p.ID, Depth: 1, Kind: "note",
				Identity: "ainotes:b", AuthorKind: "llm", Body: "N", CreatedAt: storage.Now(),
				AwaitingMode: th.AwaitingMode, AwaitingIdentity: th.AwaitingIdentity, AwaitingSetBy: th.AwaitingSetBy}
			th.MessageCount++
			return f.WriteMessage(ctx, storage.MessageWrite{Message: m, Thread: th})
		})
		if err != nil {
			t.Fatalf("reply %d: %v", i, err)
		}
	}
	prepared := func() int {
		t.Helper()
		var n int
		if err := db.NewRaw("SELECT COUNT(*) FROM pg_prepared_statements").Scan(ctx, &n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	reply(1)
	after1 := prepared()
	for i := 2; i <= 5; i++ {
		reply(i)
	}
	if n := prepared(); n != after1 || n == 0 {
		t.Errorf("%d statements prepared after one reply, %d after five", after1, n)
	}
	got, err := db.Read().Thread(ctx, th.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.MessageCount != 6 || got.LastMessageID == nil || *got.LastMessageID == *th.RootMessageID {
		t.Errorf("thread after five notes: count %d, last %v", got.MessageCount, got.LastMessageID)
	}
}
