package protocol_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/parleyforum/parley/protocol"
	"github.com/parleyforum/parley/storage"
	"github.com/parleyforum/parley/storage/storagetest"
)

// § 7: "A cursor never skips: a change committed concurrently with a read is returned by a later
// read with the returned cursor."

const icReader = "ainotes:reader"

// TestInboxCursorUnderConcurrentWrites polls one identity's inbox with small pages while eight
// writers open threads, answer, ask and decide, so that the reader's turns come and go. On
// Postgres a ninth writer meanwhile holds a transaction open that has moved a thread's inbox
// position, as storage moves it, while the others commit later positions. Once everything is
// committed, every thread whose turn is the reader's must have been seen by the polling reader
// as it is now (the same awaiting.set_by), the held one again after its commit; every item
// shown must be the reader's turn; and the inbox read from scratch must list exactly the
// threads that are the reader's.
func TestInboxCursorUnderConcurrentWrites(t *testing.T) {
	// Its own Postgres: the held transaction would hold back every other test's inbox.
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		limits := protocol.DefaultLimits()
		limits.WritesPerMinute = 1 << 20
		svc := protocol.New(db, protocol.Options{Limits: limits})
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		reader := refProtocolActor(icReader, "read,write", false)

		type thread struct{ id, creator, root string }
		var (
			mu      sync.Mutex
			threads []thread
		)
		open := func(a *protocol.Actor, body string) thread {
			res, err := svc.Send(ctx, a, refJSON(map[string]any{"kind": "ask", "body": body}))
			if err != nil {
				if ctx.Err() == nil {
					t.Errorf("%s opens a thread: %v", a.Identity, err)
				}
				return thread{}
			}
			return thread{res.Thread.ID, a.Identity, res.Message.ID}
		}
		// The reader's own threads: an answer there is directed to the reader.
		for i := range 4 {
			threads = append(threads, open(reader, fmt.Sprintf("reader's question %d", i)))
		}
		// The held thread is one no writer touches, so that only the held change can bring
		// it back into the reader's view.
		holder := refProtocolActor("ainotes:holder", "read,write", false)
		held := open(holder, "held question")
		if t.Failed() {
			t.FailNow()
		}

		seed := uint64(time.Now().UnixNano())
		t.Logf("seed %d", seed)
		var (
			writes     atomic.Int64
			heldSeen   atomic.Int64 // how often the reader was shown the held thread
			writersWG  sync.WaitGroup
			writerErrs = make(chan error, 1000)
		)
		for w := range 8 {
			writersWG.Add(1)
			go func() {
				defer writersWG.Done()
				rng := rand.New(rand.NewPCG(seed, uint64(w)))
				me := refProtocolActor(fmt.Sprintf("ainotes:iw%d", w), "read,write", false)
				for i := range 30 {
					if ctx.Err() != nil {
						return // the reader has failed
					}
					mu.Lock()
					th := threads[rng.IntN(len(threads))]
					mu.Unlock()
					env := map[string]any{"thread": th.id, "body": fmt.Sprintf("writer %d, %d", w, i)}
					switch n := rng.IntN(10); {
					case n < 2:
						if nt := open(me, fmt.Sprintf("question %d of writer %d", i, w)); nt.id != "" {
							mu.Lock()
							threads = append(threads, nt)
							mu.Unlock()
						}
						writes.Add(1)
						continue
					case n < 5:
						env["kind"] = "answer" // awaits the asker: the reader on its own threads
					case n < 7:
						env["kind"] = "ask" // anyone but me: the reader's turn too
					case n < 8:
						env["kind"] = "note"
					case n < 9 && th.creator == me.Identity:
						env["kind"] = "decide" // nobody's turn any more
					default:
						env["kind"], env["parent"] = "ask", th.root // directed to the thread's opener
					}
					_, err := svc.Send(ctx, me, refJSON(env))
					if e, ok := protocol.AsError(err); err != nil && ctx.Err() == nil && (!ok || (e.Reason != protocol.ReasonSelfReply && e.Reason != protocol.ReasonInvalidTransition)) {
						writerErrs <- fmt.Errorf("%s %v: %w", me.Identity, env, err)
					}
					writes.Add(1)
				}
			}()
		}
		if db.Kind() == storage.Postgres {
			writersWG.Add(1)
			go func() {
				defer writersWG.Done()
				// Once the reader has been shown the held thread as it was opened, only the
				// held change can show it again.
				for writes.Load() < 40 || heldSeen.Load() == 0 {
					if ctx.Err() != nil {
						return
					}
					time.Sleep(time.Millisecond)
				}
				if err := icHold(ctx, db, held.id, 1500*time.Millisecond); err != nil && ctx.Err() == nil {
					writerErrs <- err
				}
			}()
		} // SQLite serialises its writers: a held write transaction would only block the others.

		// The reader polls with small pages until the writers are done.
		seen := map[string]map[string]bool{} // thread → set_by values seen
		var cursor string
		reads, items := 0, 0
		poll := func() bool {
			req := map[string]any{"limit": 3}
			if cursor != "" {
				req["since"] = cursor
			}
			res, err := svc.Inbox(ctx, reader, refJSON(req))
			if err != nil {
				t.Fatalf("inbox: %v", err)
			}
			reads++
			for _, it := range res.Items {
				items++
				icCheckItem(t, it)
				if seen[it.Thread.ID] == nil {
					seen[it.Thread.ID] = map[string]bool{}
				}
				seen[it.Thread.ID][protocol.MessageKey(it.Awaiting.SetBy)] = true
				if it.Thread.ID == held.id {
					heldSeen.Add(1)
				}
			}
			cursor = res.Cursor
			return res.More
		}
		done := make(chan struct{})
		go func() { writersWG.Wait(); close(done) }()
		defer func() { cancel(); <-done }() // a failing reader stops the writers before it returns
	polling:
		for {
			select {
			case <-done:
				break polling
			default:
			}
			if !poll() {
				time.Sleep(2 * time.Millisecond)
			}
		}
		close(writerErrs)
		for err := range writerErrs {
			t.Error(err)
		}
		if t.Failed() {
			t.FailNow()
		}

		// Everything is committed. The reader reads on with its cursor until it has seen
		// every thread that is its turn as it is now. Transactions of other tests on the same
		// server may hold the horizon back for a while: the reader waits, with a deadline.
		deadline := time.Now().Add(30 * time.Second)
		for {
			for poll() {
			}
			want := icTurns(t, svc, reader)
			fresh := icInbox(t, svc, reader)
			missing := icMissing(want, seen)
			if db.Kind() == storage.Postgres && heldSeen.Load() < 2 {
				missing = append(missing, held.id+" after the held change")
			}
			if len(missing) == 0 && icSame(want, fresh) {
				t.Logf("%d reads, %d items; %d threads are the reader's turn", reads, items, len(want))
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("the polling reader never saw %v\nthe reader's turns: %v\nits inbox from scratch: %v", missing, want, fresh)
			}
			time.Sleep(20 * time.Millisecond)
		}
	})
}

// TestInboxCursorWaitsForAnOpenTransaction shows on Postgres, step by step, why the inbox
// cursor cannot skip: a transaction that has taken an inbox position stays open while later
// transactions commit theirs. The reader is shown none of the later ones while it is open (its
// cursor stays below the open position), and after the commit it is shown the held thread and
// all the later ones. SQLite has no such interleaving: its writers take turns.
func TestInboxCursorWaitsForAnOpenTransaction(t *testing.T) {
	db := storagetest.Open(t, storage.Postgres)
	svc := protocol.New(db, protocol.Options{})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	reader := refProtocolActor(icReader, "read", false)
	asker := refProtocolActor("ainotes:asker", "read,write", false)
	open := func(body string) string {
		t.Helper()
		res, err := svc.Send(ctx, asker, refJSON(map[string]any{"kind": "ask", "body": body}))
		if err != nil {
			t.Fatal(err)
		}
		return res.Thread.ID
	}
	read := func(cursor string) ([]string, string) {
		t.Helper()
		var ids []string
		for {
			req := map[string]any{"limit": 2}
			if cursor != "" {
				req["since"] = cursor
			}
			res, err := svc.Inbox(ctx, reader, refJSON(req))
			if err != nil {
				t.Fatal(err)
			}
			for _, it := range res.Items {
				icCheckItem(t, it)
				ids = append(ids, it.Thread.ID)
			}
			cursor = res.Cursor
			if !res.More {
				return ids, cursor
			}
		}
	}

	held := open("held")
	before := []string{held, open("one"), open("two")}
	// The three have committed and nothing else runs in this database, so the first pages
	// hold them; read as a reader does, until caught up.
	var cursor string
	var seen []string
	for deadline := time.Now().Add(30 * time.Second); len(seen) < len(before); {
		var ids []string
		ids, cursor = read(cursor)
		seen = append(seen, ids...)
		if time.Now().After(deadline) {
			t.Fatalf("the reader saw %v of %v", seen, before)
		}
	}

	taken, release := make(chan struct{}), make(chan struct{})
	holding := make(chan error, 1)
	go func() {
		holding <- db.Write(ctx, func(ctx context.Context, f *storage.Forum) error {
			if err := icMoveInbox(ctx, f, held); err != nil {
				return err
			}
			close(taken)
			<-release
			return nil
		})
	}()
	select {
	case <-taken:
	case err := <-holding:
		t.Fatalf("holding: %v", err)
	}
	var later []string
	for i := range 5 {
		later = append(later, open(fmt.Sprintf("later %d", i)))
	}
	for range 3 {
		var ids []string
		ids, cursor = read(cursor)
		if len(ids) > 0 {
			t.Fatalf("while a transaction with an earlier position is open, the reader was shown %v: its cursor would pass the open position", ids)
		}
	}
	close(release)
	if err := <-holding; err != nil {
		t.Fatalf("holding: %v", err)
	}

	want := append([]string{held}, later...)
	var after []string
	for deadline := time.Now().Add(30 * time.Second); ; {
		var ids []string
		ids, cursor = read(cursor)
		after = append(after, ids...)
		if icContainsAll(after, want) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after the commit the reader was shown %v; want all of %v", after, want)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// icHold moves a thread's inbox position in a transaction that stays open for d.
func icHold(ctx context.Context, db *storage.DB, thread string, d time.Duration) error {
	return db.Write(ctx, func(ctx context.Context, f *storage.Forum) error {
		if err := icMoveInbox(ctx, f, thread); err != nil {
			return err
		}
		time.Sleep(d)
		return nil
	})
}

// icMoveInbox gives a thread a new inbox position the way every write does.
func icMoveInbox(ctx context.Context, f *storage.Forum, thread string) error {
	id, ok := protocol.ParseIDString(thread, "th_")
	if !ok {
		return fmt.Errorf("bad thread id %q", thread)
	}
	th, err := f.ThreadForUpdate(ctx, id)
	if err != nil {
		return err
	}
	return f.UpdateThread(ctx, th, true)
}

// icCheckItem: an item is the reader's turn (§ 7), and names the message that set it.
func icCheckItem(t *testing.T, it protocol.InboxItem) {
	t.Helper()
	aw := it.Awaiting
	switch {
	case aw == nil:
		t.Fatalf("inbox item %s awaits nobody", it.Thread.ID)
	case aw.To != nil && aw.To.Identity != icReader:
		t.Fatalf("inbox item %s awaits %s, not the reader", it.Thread.ID, aw.To.Identity)
	case it.Message == nil || it.Message.ID != protocol.MessageKey(aw.SetBy):
		t.Fatalf("inbox item %s: its message is not the one that set the awaiting", it.Thread.ID)
	case it.Thread.Locked || it.Thread.State == protocol.StateDeferred || it.Thread.State == protocol.StateObsolete || it.Thread.State == protocol.StateRejected:
		t.Fatalf("inbox item %s is %s (locked %v)", it.Thread.ID, it.Thread.State, it.Thread.Locked)
	}
}

// icTurns is the truth the inbox must show: every thread, read directly, whose turn is the
// reader's, with the message that set it.
func icTurns(t *testing.T, svc *protocol.Service, reader *protocol.Actor) map[string]string {
	t.Helper()
	out := map[string]string{}
	req := map[string]any{"limit": 100}
	for {
		res, err := svc.ListThreads(context.Background(), reader, refJSON(req))
		if err != nil {
			t.Fatal(err)
		}
		for _, th := range res.Threads {
			aw := th.Awaiting
			side := th.State == protocol.StateDeferred || th.State == protocol.StateObsolete || th.State == protocol.StateRejected
			if aw == nil || th.Locked || side || (aw.To != nil && aw.To.Identity != reader.Identity) {
				continue
			}
			out[th.ID] = protocol.MessageKey(aw.SetBy)
		}
		if !res.More {
			return out
		}
		req["cursor"] = *res.Cursor
	}
}

// icInbox reads the whole inbox from scratch.
func icInbox(t *testing.T, svc *protocol.Service, reader *protocol.Actor) map[string]string {
	t.Helper()
	out := map[string]string{}
	req := map[string]any{"limit": 7}
	for {
		res, err := svc.Inbox(context.Background(), reader, refJSON(req))
		if err != nil {
			t.Fatal(err)
		}
		for _, it := range res.Items {
			if _, twice := out[it.Thread.ID]; twice {
				t.Fatalf("the inbox read from scratch lists %s twice", it.Thread.ID)
			}
			out[it.Thread.ID] = protocol.MessageKey(it.Awaiting.SetBy)
		}
		if !res.More {
			return out
		}
		req["since"] = res.Cursor
	}
}

func icMissing(want map[string]string, seen map[string]map[string]bool) []string {
	var out []string
	for th, setBy := range want {
		if !seen[th][setBy] {
			out = append(out, th+" set by "+setBy)
		}
	}
	sort.Strings(out)
	return out
}

func icSame(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

func icContainsAll(have, want []string) bool {
	joined := "," + strings.Join(have, ",") + ","
	for _, w := range want {
		if !strings.Contains(joined, ","+w+",") {
			return false
		}
	}
	return true
}
