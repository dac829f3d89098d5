package benchdata_test

import (
	"context"
	"fmt"
	"sort"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/parleyforum/parley/migrations"
	"github.com/parleyforum/parley/protocol"
	"github.com/parleyforum/parley/storage"
	"github.com/parleyforum/parley/storage/benchdata"
	"github.com/parleyforum/parley/storage/storagetest"
)

func TestMain(m *testing.M) { storagetest.Main(m) }

// The seeded rows are the rows that sending the same conversations through the protocol
// writes: same ids, states, awaiting, inbox order, parents, events. Only the times differ.
func TestSeedWritesWhatTheProtocolWrites(t *testing.T) {
	forum := benchdata.Forum{Messages: 48, ThreadSize: 6, Agents: 7, OpenEvery: 3}
	for _, kind := range storagetest.Kinds() {
		t.Run(string(kind), func(t *testing.T) {
			ctx := context.Background()
			seeded, sent := storagetest.Open(t, kind), storagetest.Open(t, kind)
			seededSvc := protocol.New(seeded, protocol.Options{})
			sentSvc := protocol.New(sent, protocol.Options{})

			// Something before the seed, so that the seed has to number after it.
			prefix := benchdata.Forum{Messages: 4, ThreadSize: 4, Agents: 4}
			replay(t, seededSvc, prefix, 1)
			replay(t, sentSvc, prefix, 1)

			got, err := benchdata.Seed(ctx, seeded, forum)
			if err != nil {
				t.Fatal(err)
			}
			want := benchdata.Seeded{Threads: 8, Messages: 48, Events: 8 + 6, FirstThread: 2, LastThread: 9}
			if got != want {
				t.Errorf("Seed = %+v, want %+v", got, want)
			}
			for k := 1; k <= forum.Threads(); k++ {
				replay(t, sentSvc, forum, k)
			}

			// And the protocol carries on from the seeded rows as from its own.
			for _, svc := range []*protocol.Service{seededSvc, sentSvc} {
				mustSend(t, svc, 5, `{"kind":"answer","thread":"th_4","body":"An answer after the seed."}`)
				mustSend(t, svc, 6, `{"kind":"answer","thread":"th_2","body":"A second answer."}`)
				mustSend(t, svc, 2, `{"kind":"ask","body":"A new question after the seed."}`)
			}

			if diff := cmp.Diff(dump(t, sent), dump(t, seeded)); diff != "" {
				t.Errorf("seeded rows differ from the rows the protocol writes (-sent +seeded):\n%s", diff)
			}
		})
	}
}

func TestSeedRefusesForumsItCannotWrite(t *testing.T) {
	db := storagetest.Open(t, storage.SQLite)
	for _, f := range []benchdata.Forum{
		{Messages: 0},
		{Messages: 10, ThreadSize: 1},
		{Messages: 10, ThreadSize: 10, Agents: 9},
	} {
		if _, err := benchdata.Seed(context.Background(), db, f); err == nil {
			t.Errorf("Seed(%+v) succeeded", f)
		}
	}
}

// replay sends thread k of forum through the protocol, each step with its default parent.
func replay(t *testing.T, svc *protocol.Service, forum benchdata.Forum, k int) {
	t.Helper()
	var thread string
	for _, st := range forum.Conversation(k) {
		env := fmt.Sprintf(`{"kind":%q,"body":%q}`, st.Kind, st.Body)
		if thread != "" {
			env = fmt.Sprintf(`{"kind":%q,"thread":%q,"body":%q}`, st.Kind, thread, st.Body)
		}
		res := mustSend(t, svc, st.Agent, env)
		thread = res.Thread.ID
	}
}

func mustSend(t *testing.T, svc *protocol.Service, agent int, env string) *protocol.SendResult {
	t.Helper()
	a := &protocol.Actor{Identity: benchdata.Agent("ainotes", agent), Rights: protocol.Rights{}}
	a.Rights, _ = protocol.ParseRights("read,write")
	res, err := svc.Send(context.Background(), a, []byte(env))
	if err != nil {
		t.Fatalf("%s sends %s: %v", a.Identity, env, err)
	}
	return res
}

type rows struct {
	Threads  []storage.Thread
	Messages []storage.Message
	Events   []storage.Event
}

// dump reads every thread, message and event, with times reduced to whether they are set
// and inbox positions to their order.
func dump(t *testing.T, db *storage.DB) rows {
	t.Helper()
	ctx := context.Background()
	var r rows
	for _, q := range []error{
		db.NewSelect().Model(&r.Threads).Order("id").Scan(ctx),
		db.NewSelect().Model(&r.Messages).Order("id").Scan(ctx),
		db.NewSelect().Model(&r.Events).Order("id").Scan(ctx),
	} {
		if q != nil {
			t.Fatal(q)
		}
	}
	set := time.Unix(1, 0).UTC()
	seen := func(p *time.Time) *time.Time {
		if p == nil {
			return nil
		}
		return &set
	}
	order := make([]int, len(r.Threads))
	for i := range order {
		order[i] = i
	}
	sort.Slice(order, func(a, b int) bool {
		x, y := r.Threads[order[a]], r.Threads[order[b]]
		return storage.Position{Tx: x.InboxTx, Seq: x.InboxSeq}.Less(storage.Position{Tx: y.InboxTx, Seq: y.InboxSeq})
	})
	for rank, i := range order {
		th := &r.Threads[i]
		th.InboxTx, th.InboxSeq = 0, int64(rank)
		th.CreatedAt, th.UpdatedAt = time.Time{}, time.Time{}
		th.StateConfirmedAt = seen(th.StateConfirmedAt)
	}
	for i := range r.Messages {
		r.Messages[i].CreatedAt = time.Time{}
	}
	for i := range r.Events {
		e := &r.Events[i]
		e.At = time.Time{}
		e.ConfirmedAt = seen(e.ConfirmedAt)
	}
	return r
}

// The baseline writes rows the protocol reads as its own: a whole conversation, each write
// counted against its identity's limit, then the thread as the protocol shows it.
func TestDirectWritesAConversation(t *testing.T) {
	for _, kind := range storagetest.Kinds() {
		t.Run(string(kind), func(t *testing.T) { directConversation(t, kind) })
	}
}

func directConversation(t *testing.T, kind storage.Kind) {
	ctx := context.Background()
	url := storagetest.NewURL(t, kind)
	db, err := storage.Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := migrations.Up(ctx, db); err != nil {
		t.Fatal(err)
	}
	d, err := benchdata.OpenDirect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	asker, other := benchdata.Agent("ainotes", 1), benchdata.Agent("ainotes", 2)
	th, err := d.Ask(ctx, asker, "Which port?")
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range []struct{ kind, who, from, to string }{
		{"answer", other, "open", "answered"},
		{"note", other, "", ""},
		{"answer", other, "", ""},
		{"decide", asker, "answered", "decided"},
		{"close", asker, "decided", "closed"},
	} {
		if err := d.Reply(ctx, th, r.kind, r.who, "A "+r.kind+".", r.from, r.to); err != nil {
			t.Fatalf("%s: %v", r.kind, err)
		}
	}
	// Each write is counted against its identity's writes_per_minute, as a send's is.
	for who, want := range map[string]int{asker: 3, other: 3} {
		var records, counted int
		if err := db.NewRaw("SELECT count(*) FROM write_times WHERE identity = ?", who).Scan(ctx, &records); err != nil {
			t.Fatal(err)
		}
		if err := db.NewRaw("SELECT n FROM write_counts WHERE identity = ?", who).Scan(ctx, &counted); err != nil {
			t.Fatal(err)
		}
		if records != want || counted != want {
			t.Errorf("%s: %d writes recorded, %d counted; want %d", who, records, counted, want)
		}
	}
	svc := protocol.New(db, protocol.Options{})
	reader := &protocol.Actor{Identity: asker}
	reader.Rights, _ = protocol.ParseRights("read")
	key := fmt.Sprintf(`{"thread":"th_%d"}`, th.ID)
	read, err := svc.ReadThread(ctx, reader, []byte(key))
	if err != nil {
		t.Fatal(err)
	}
	if read.Thread.State != protocol.StateClosed || read.Thread.MessageCount != 6 ||
		len(read.Messages) != 1 || len(read.Messages[0].Replies) != 5 {
		t.Errorf("thread after the baseline's conversation: %+v, %d roots", read.Thread, len(read.Messages))
	}
	evs, err := svc.ReadEvents(ctx, reader, []byte(key))
	if err != nil {
		t.Fatal(err)
	}
	var acts []string
	for _, e := range evs.Events {
		acts = append(acts, e.Act+":"+string(e.To))
	}
	if diff := cmp.Diff([]string{"ask:open", "answer:answered", "decide:decided", "close:closed"}, acts); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
}

// The bulk seed, with the feed's triggers paused and the feed written afterwards, leaves the
// feed the triggers write row by row — the same rows in the same order — and resumes
// everything it paused: the triggers write the feed of the next send again, and the search
// index is back.
func TestSeedRebuildsWhatTheTriggersWrite(t *testing.T) {
	forum := benchdata.Forum{Messages: 60, ThreadSize: 6, Agents: 7, OpenEvery: 3}
	type feedRow struct {
		Seq     int64  `bun:"seq"`
		Thread  int64  `bun:"thread_id"`
		Message *int64 `bun:"message_id"`
		Event   *int64 `bun:"event_id"`
	}
	feed := func(t *testing.T, db *storage.DB) []feedRow {
		t.Helper()
		order := "seq"
		if db.Kind() == storage.Postgres {
			order = "tx, seq"
		}
		var rows []feedRow
		err := db.NewRaw("SELECT seq, thread_id, message_id, event_id FROM feed ORDER BY "+order).Scan(context.Background(), &rows)
		if err != nil || len(rows) == 0 {
			t.Fatalf("feed: %v %v", rows, err)
		}
		return rows
	}
	for _, kind := range storagetest.Kinds() {
		t.Run(string(kind), func(t *testing.T) {
			ctx := context.Background()
			bulk, rowByRow := storagetest.Open(t, kind), storagetest.Open(t, kind)
			for _, db := range []*storage.DB{bulk, rowByRow} {
				svc := protocol.New(db, protocol.Options{})
				replay(t, svc, benchdata.Forum{Messages: 4, ThreadSize: 4, Agents: 4}, 1)
				f := forum
				f.RowByRow = db == rowByRow
				if _, err := benchdata.Seed(ctx, db, f); err != nil {
					t.Fatal(err)
				}
				mustSend(t, svc, 5, `{"kind":"answer","thread":"th_4","body":"An answer after the seed."}`)
			}
			if diff := cmp.Diff(feed(t, rowByRow), feed(t, bulk)); diff != "" {
				t.Errorf("the bulk seed's feed differs from the triggers' (-row by row +bulk):\n%s", diff)
			}
			var n int
			check := "SELECT count(*) FROM sqlite_master WHERE type = 'trigger' AND name IN ('messages_feed', 'events_feed')"
			want := 2
			if kind == storage.Postgres {
				check = `SELECT (SELECT count(*) FROM pg_indexes WHERE indexname = 'messages_search_idx') +
					(SELECT count(*) FROM pg_trigger WHERE tgname IN ('messages_feed', 'events_feed', 'threads_announce_inbox') AND tgenabled = 'O')`
				want = 4
			}
			if err := bulk.NewRaw(check).Scan(ctx, &n); err != nil || n != want {
				t.Errorf("after the bulk seed %d of %d triggers and indexes are back (%v)", n, want, err)
			}
		})
	}
}
