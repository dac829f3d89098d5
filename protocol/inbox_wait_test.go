package protocol_test

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"github.com/parleyforum/parley/protocol"
	"github.com/parleyforum/parley/storage"
	"github.com/parleyforum/parley/storage/storagetest"
)

// A long poll whose context ends — its transport shutting down — answers with what there is,
// never with the context's error: the end of the context ends the wait, not the reading.
func TestInboxEndsItsWaitWithItsContext(t *testing.T) {
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		svc := protocol.New(db, protocol.Options{})
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		res, err := svc.Inbox(ctx, agent("alice", "read"), []byte(`{"wait_seconds":30}`))
		if err != nil {
			t.Fatalf("a long poll whose context has ended: %v, want its answer", err)
		}
		if len(res.Items) != 0 || res.Cursor == "" {
			t.Errorf("the answer = %+v, want no items and a cursor", res)
		}
	})
}

// queryCounter counts the statements a DB runs.
type queryCounter struct{ n atomic.Int64 }

func (q *queryCounter) BeforeQuery(ctx context.Context, _ *bun.QueryEvent) context.Context {
	q.n.Add(1)
	return ctx
}
func (q *queryCounter) AfterQuery(context.Context, *bun.QueryEvent) {}

// A waiting long poll costs nothing while nothing changes: it reads once, then waits for the
// change signal instead of asking the database again and again.
func TestIdleLongPollDoesNotQuery(t *testing.T) {
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		svc := protocol.New(db, protocol.Options{})
		listening(t, svc, db, agent("nobody", "read"))
		queries := &queryCounter{}
		db.AddQueryHook(queries)
		res, err := svc.Inbox(context.Background(), agent("alice", "read"), []byte(`{"wait_seconds":3}`))
		if err != nil || len(res.Items) != 0 {
			t.Fatalf("an idle long poll: %+v %v", res, err)
		}
		if n := queries.n.Load(); n > 2 {
			t.Errorf("an idle long poll of 3 s ran %d statements, want one read (at most 2 statements)", n)
		}
	})
}

// A change made by another instance on the same database wakes a long poll at once: on
// Postgres the database announces it to every instance (LISTEN/NOTIFY).
func TestLongPollIsWokenByAnotherInstance(t *testing.T) {
	ctx := context.Background()
	db := storagetest.Open(t, storage.Postgres)
	other, err := storage.Open(ctx, db.URL())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { other.Close() })
	waiter, writer := protocol.New(db, protocol.Options{}), protocol.New(other, protocol.Options{})
	alice, bob := agent("alice", "read,write"), agent("bob", "read,write")
	first := listening(t, waiter, db, bob)
	queries := &queryCounter{}
	db.AddQueryHook(queries)
	type answer struct {
		res *protocol.InboxResult
		err error
	}
	done := make(chan answer, 1)
	go func() {
		res, err := waiter.Inbox(ctx, bob, []byte(`{"wait_seconds":30,"since":"`+first.Cursor+`"}`))
		done <- answer{res, err}
	}()
	for db.Changes().Waiting() == 0 { // the waiter has read and waits
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(1500 * time.Millisecond) // long enough for a poll every second to show
	asked := send(t, writer, alice, envelope("ask", "", "Anyone there?"))
	got := <-done
	if got.err != nil || len(got.res.Items) != 1 || got.res.Items[0].Thread.ID != asked.Thread.ID {
		t.Fatalf("the long poll answered %+v %v, want the new thread", got.res, got.err)
	}
	if n := queries.n.Load(); n > 4 {
		t.Errorf("the long poll ran %d statements while it waited, want its reads alone", n)
	}
}

// Long polls waiting at once are bounded per identity and in all; a refused one is
// rate_limited with retry_after, and a place is free again as soon as a wait ends.
func TestLongPollsAreBounded(t *testing.T) {
	limits := protocol.DefaultLimits()
	limits.InboxWaitsPerIdentity = 2
	limits.InboxWaitsMax = 3
	svc := protocol.New(storagetest.Open(t, storage.SQLite), protocol.Options{Limits: limits})
	ctx, cancel := context.WithCancel(context.Background())
	var waiting sync.WaitGroup
	wait := func(a *protocol.Actor) {
		waiting.Add(1)
		go func() {
			defer waiting.Done()
			// Until it has a place: a probe below may hold one for a moment.
			for ctx.Err() == nil {
				_, err := svc.Inbox(ctx, a, []byte(`{"wait_seconds":30}`))
				if e, ok := protocol.AsError(err); !ok || e.Reason != protocol.ReasonRateLimited {
					return
				}
				time.Sleep(10 * time.Millisecond)
			}
		}()
	}
	refused := func(a *protocol.Actor) *protocol.Error {
		_, err := svc.Inbox(context.Background(), a, []byte(`{"wait_seconds":1}`))
		e, _ := protocol.AsError(err)
		return e
	}
	alice, bob, carol := agent("alice", "read"), agent("bob", "read"), agent("carol", "read")
	wait(alice)
	wait(alice)
	waitUntil(t, func() bool { e := refused(alice); return e != nil })
	if e := refused(alice); e.Reason != protocol.ReasonRateLimited || e.RetryAfter < 1 || !strings.Contains(e.Message, "inbox_waits_per_identity") {
		t.Errorf("a third wait of alice: %+v", e)
	}
	if res, err := svc.Inbox(context.Background(), alice, []byte(`{}`)); err != nil || res == nil {
		t.Errorf("a read without wait is never refused: %v", err)
	}
	wait(bob)
	waitUntil(t, func() bool { e := refused(carol); return e != nil })
	if e := refused(carol); e.Reason != protocol.ReasonRateLimited || !strings.Contains(e.Message, "inbox_waits_max") {
		t.Errorf("a fourth wait on the server: %+v", e)
	}
	cancel()
	waiting.Wait()
	if e := refused(carol); e != nil {
		t.Errorf("after the waits ended: %+v", e)
	}
}

// waitUntil polls cond until it holds, failing the test after 10 s.
func waitUntil(t *testing.T, cond func() bool) {
	t.Helper()
	for start := time.Now(); !cond(); time.Sleep(20 * time.Millisecond) {
		if time.Since(start) > 10*time.Second {
			t.Fatal("the condition never held")
		}
	}
}

// listening waits a second with svc on db as reader, so that the database's announcements are
// listened to from then on (the listening connection opens with the first wait, and its
// opening wakes every waiter once), and returns reader's inbox cursor after it (a cursor is
// its reader's: § 19).
func listening(t *testing.T, svc *protocol.Service, db *storage.DB, reader *protocol.Actor) *protocol.InboxResult {
	t.Helper()
	res, err := svc.Inbox(context.Background(), reader, []byte(`{"wait_seconds":1}`))
	if err != nil {
		t.Fatal(err)
	}
	// On a loaded machine the listening connection can take longer than that wait to open,
	// and its first wake-up would then wake the test's own waiter once more.
	for deadline := time.Now().Add(30 * time.Second); db.Kind() == storage.Postgres && !db.Changes().Listening(); {
		if time.Now().After(deadline) {
			t.Fatal("the database's announcements were not heard within 30 s")
		}
		time.Sleep(10 * time.Millisecond)
	}
	return res
}

// A change that wakes a long poll while an older transaction still runs on Postgres is
// behind the read's horizon at first; that transaction's end announces nothing, so the
// waiter looks again shortly after a wake-up and still answers with the change, not empty
// at the end of its wait.
func TestLongPollSeesAChangeHeldBehindAnOlderTransaction(t *testing.T) {
	ctx := context.Background()
	db := storagetest.Open(t, storage.Postgres)
	svc := protocol.New(db, protocol.Options{})
	alice, bob := agent("alice", "read,write"), agent("bob", "read,write")
	first := listening(t, svc, db, bob)

	older, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer older.Rollback()
	if _, err := older.ExecContext(ctx, "SELECT pg_current_xact_id()"); err != nil { // takes a transaction id
		t.Fatal(err)
	}
	done := make(chan *protocol.InboxResult, 1)
	go func() {
		res, err := svc.Inbox(ctx, bob, []byte(`{"wait_seconds":20,"since":"`+first.Cursor+`"}`))
		if err != nil {
			t.Error(err)
		}
		done <- res
	}()
	for db.Changes().Waiting() == 0 {
		time.Sleep(10 * time.Millisecond)
	}
	asked := send(t, svc, alice, envelope("ask", "", "Held back?"))
	time.Sleep(30 * time.Millisecond) // the waiter wakes and finds nothing yet
	if err := older.Commit(); err != nil {
		t.Fatal(err)
	}
	res := <-done
	if res == nil || len(res.Items) != 1 || res.Items[0].Thread.ID != asked.Thread.ID {
		t.Fatalf("the long poll answered %+v, want the thread held back at first", res)
	}
}

// A long transaction in another database of the same Postgres server holds back no inbox
// here: the change is in the first read after the send, as it is on a server of its own.
func TestInboxIsNotHeldByAnotherDatabase(t *testing.T) {
	ctx := context.Background()
	db := storagetest.Open(t, storage.Postgres)
	release := storagetest.HoldTransaction(t, storagetest.Open(t, storage.Postgres))
	defer release()
	svc := protocol.New(db, protocol.Options{})
	alice, bob := agent("alice", "read,write"), agent("bob", "read,write")
	asked := send(t, svc, alice, envelope("ask", "", "Held back by a neighbour?"))
	res, err := svc.Inbox(ctx, bob, []byte(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Items) != 1 || res.Items[0].Thread.ID != asked.Thread.ID {
		t.Fatalf("bob's inbox lists %+v, want the ask at once", res.Items)
	}
}
