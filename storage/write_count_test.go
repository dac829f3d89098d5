package storage_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/parleyforum/parley/storage"
	"github.com/parleyforum/parley/storage/storagetest"
)

// A message written with a count (MessageWrite.Count) is counted against its identity's
// limit in the write itself: at the limit the write is refused with the time the oldest
// counted write leaves the minute, and writes nothing — no message, no event, no count, the
// thread as it was. The reads before it take the identity's lock on Postgres, or not.
func TestCountedWrite(t *testing.T) {
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		ctx := context.Background()
		const limit = 2
		first := storage.Now()
		var th storage.Thread
		write := func(at time.Time, withLock bool) error {
			return db.Write(ctx, func(ctx context.Context, f *storage.Forum) error {
				writer := ""
				if withLock {
					writer = "ainotes:b"
				}
				p, got, err := f.ParentAndThreadForUpdate(ctx, *th.RootMessageID, 0, writer)
				if err != nil {
					return err
				}
				m := &storage.Message{ThreadID: got.ID, ParentID: &p.ID, AskID: &p.ID, Depth: 1, Kind: "answer",
					Identity: "ainotes:b", AuthorKind: "llm", Body: "A", CreatedAt: at,
					AwaitingMode: storage.AwaitingTo, AwaitingIdentity: "ainotes:a"}
				got.MessageCount++
				got.State, got.AwaitingMode, got.AwaitingIdentity = "answered", storage.AwaitingTo, "ainotes:a"
				from := "open"
				ev := &storage.Event{ThreadID: got.ID, Subject: "t", Act: "answer", FromState: &from, ToState: "answered",
					Origin: "llm", ActorIdentity: "ainotes:b", Label: "b", At: at}
				return f.WriteMessage(ctx, storage.MessageWrite{Message: m, Event: ev, Thread: got, MoveInbox: true,
					Count: &storage.WriteCount{Identity: "ainotes:b", Now: at, Limit: limit}})
			})
		}
		err := db.Write(ctx, func(ctx context.Context, f *storage.Forum) error {
			th = storage.Thread{Title: "Q", State: "open", StateOrigin: "llm", ConfirmedState: "open",
				Creator: "ainotes:a", CreatedAt: first, UpdatedAt: first}
			if err := f.OpenThread(ctx, &th, "ainotes:a"); err != nil {
				return err
			}
			m := &storage.Message{ThreadID: th.ID, Kind: "ask", Identity: "ainotes:a", AuthorKind: "llm",
				Body: "Q", CreatedAt: first, AwaitingMode: storage.AwaitingAny, AwaitingIdentity: "ainotes:a"}
			th.MessageCount = 1
			return f.WriteMessage(ctx, storage.MessageWrite{Message: m, Thread: &th, Opens: true,
				AwaitedBySelf: true, MoveInbox: true,
				Count: &storage.WriteCount{Identity: "ainotes:a", Now: first, Limit: limit}})
		})
		if err != nil {
			t.Fatal(err)
		}
		if err := write(first, true); err != nil {
			t.Fatalf("first counted write: %v", err)
		}
		if err := write(first.Add(time.Second), false); err != nil {
			t.Fatalf("second counted write, lock taken by the count: %v", err)
		}
		before, err := db.Read().Thread(ctx, th.ID)
		if err != nil {
			t.Fatal(err)
		}
		err = write(first.Add(2*time.Second), true)
		var limited *storage.WriteLimited
		if !errors.As(err, &limited) || !limited.Free.Equal(first.Add(time.Minute)) {
			t.Fatalf("third write within the minute: %v, want WriteLimited free at %v", err, first.Add(time.Minute))
		}
		after, err := db.Read().Thread(ctx, th.ID)
		if err != nil {
			t.Fatal(err)
		}
		if after.MessageCount != before.MessageCount || *after.LastMessageID != *before.LastMessageID ||
			after.InboxSeq != before.InboxSeq {
			t.Errorf("a refused write changed the thread: %+v -> %+v", before, after)
		}
		var messages, events, counted int
		for table, n := range map[string]*int{"messages": &messages, "events": &events} {
			if err := db.NewRaw("SELECT count(*) FROM "+table+" WHERE thread_id = ?", th.ID).Scan(ctx, n); err != nil {
				t.Fatal(err)
			}
		}
		if err := db.NewRaw("SELECT count(*) FROM write_times WHERE identity = 'ainotes:b'").Scan(ctx, &counted); err != nil {
			t.Fatal(err)
		}
		if messages != 3 || events != 2 || counted != 2 {
			t.Errorf("after a refused write: %d messages, %d events, %d counted writes; want 3, 2, 2", messages, events, counted)
		}
		// A minute after the first write, one write is free again.
		if err := write(first.Add(time.Minute+time.Second), true); err != nil {
			t.Errorf("a write after the oldest left the minute: %v", err)
		}
	})
}
