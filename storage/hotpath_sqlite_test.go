package storage_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/parleyforum/parley/storage"
	"github.com/parleyforum/parley/storage/storagetest"
)

// The prepared hot path of SQLite (hotpath_sqlite.go) writes byte for byte what bun's
// statements write: the same conversation — an ask opening a thread, a counted answer that
// changes the state, a note, a write refused at the limit — through DB.Write and through
// bun's statements alone, each into a fresh database, leaves the same rows, every column
// compared as SQLite stores it (its type and its text), in every table a send writes.
func TestSQLiteHotPathWritesWhatBunWrites(t *testing.T) {
	ctx := context.Background()
	at := time.Date(2026, 12, 2, 1, 2, 3, 456789000, time.UTC)
	conversation := func(db *storage.DB, write func(context.Context, func(context.Context, *storage.Forum) error) error) []error {
		var th storage.Thread
		var errs []error
		count := func(i int) *storage.WriteCount {
			return &storage.WriteCount{Identity: "ainotes:b", Now: at.Add(time.Duration(i) * time.Second), Limit: 2}
		}
		errs = append(errs, write(ctx, func(ctx context.Context, f *storage.Forum) error {
			th = storage.Thread{Title: "Q?", State: "open", StateOrigin: "llm", ConfirmedState: "open",
				Creator: "ainotes:a", CreatorExtension: "x", CreatedAt: at, UpdatedAt: at}
			if err := f.InsertThread(ctx, &th); err != nil {
				return err
			}
			m := &storage.Message{ThreadID: th.ID, Kind: "ask", Identity: "ainotes:a", Extension: "x", AuthorKind: "llm",
				Body: "Q? ünïcode 'quoted'", CreatedAt: at, AwaitingMode: storage.AwaitingAny, AwaitingIdentity: "ainotes:a"}
			e := &storage.Event{ThreadID: th.ID, Subject: "th", Act: "ask", ToState: "open", Origin: "llm",
				ActorIdentity: "ainotes:a", Confirmed: true, ConfirmedAt: &at, At: at}
			th.MessageCount = 1
			any := storage.InboxAny
			th.InboxTo = &any
			return f.WriteMessage(ctx, storage.MessageWrite{Message: m, Event: e, Thread: &th, Opens: true,
				AwaitedBySelf: true, MoveInbox: true, Count: &storage.WriteCount{Identity: "ainotes:a", Now: at, Limit: 2}})
		}))
		for i, kind := range []string{"answer", "note", "note"} {
			errs = append(errs, write(ctx, func(ctx context.Context, f *storage.Forum) error {
				p, th, err := f.ParentAndThreadForUpdate(ctx, *th.RootMessageID, 0, "ainotes:b")
				if err != nil {
					return err
				}
				m := &storage.Message{ThreadID: th.ID, ParentID: &p.ID, AskID: &p.ID, Depth: 1, Kind: kind,
					Identity: "ainotes:b", AuthorKind: "llm", Body: kind + " " + strings.Repeat("x", i), CreatedAt: at.Add(time.Duration(i+1) * time.Second),
					AwaitingMode: storage.AwaitingTo, AwaitingIdentity: "ainotes:a", AwaitingSetBy: th.AwaitingSetBy}
				th.MessageCount++
				th.UpdatedAt = m.CreatedAt
				w := storage.MessageWrite{Message: m, Thread: th, Count: count(i + 1)}
				if kind == "answer" {
					from := th.State
					th.State, th.StateConfirmedAt = "answered", nil
					w.Event = &storage.Event{ThreadID: th.ID, Subject: "th", Act: "answer", FromState: &from, ToState: "answered",
						Origin: "llm", ActorIdentity: "ainotes:b", At: m.CreatedAt}
					w.AwaitedBySelf, w.MoveInbox = true, true
					to := "ainotes:a"
					th.InboxTo = &to
				}
				return f.WriteMessage(ctx, w)
			}))
		}
		// A write's idempotency key, and the same key again: taken, nothing stored.
		for _, body := range []string{`{"message":{"id":"m_1"}}`, `{"message":{"id":"m_2"}}`} {
			errs = append(errs, write(ctx, func(ctx context.Context, f *storage.Forum) error {
				taken, err := f.KeepIdempotencyKey(ctx, &storage.IdempotencyKey{Identity: "ainotes:b", Key: "k-1",
					Operation: "send", InputSHA256: "ab", Fresh: true, Body: body, CreatedAt: at})
				if err == nil && !taken {
					err = errors.New("key taken")
				}
				return err
			}))
		}
		// A string bun refuses (NUL) is refused on the hot path too, and writes nothing.
		errs = append(errs, write(ctx, func(ctx context.Context, f *storage.Forum) error {
			return f.InsertMessage(ctx, &storage.Message{ThreadID: th.ID, Kind: "note", Identity: "ainotes:c",
				AuthorKind: "llm", Body: "a\x00b", CreatedAt: at})
		}))
		return errs
	}
	hot, plain := storagetest.Open(t, storage.SQLite), storagetest.Open(t, storage.SQLite)
	hotErrs, plainErrs := conversation(hot, hot.Write), conversation(plain, plain.WriteWithBun)
	for i := range hotErrs {
		if (hotErrs[i] == nil) != (plainErrs[i] == nil) {
			t.Fatalf("write %d: hot path %v, bun %v", i, hotErrs[i], plainErrs[i])
		}
	}
	// The third reply is the identity's third write within the minute: refused at the limit.
	var limited *storage.WriteLimited
	if !errors.As(hotErrs[3], &limited) || hotErrs[4] != nil || hotErrs[5] == nil || hotErrs[6] == nil {
		t.Fatalf("errors: %v", hotErrs)
	}
	for _, table := range []string{"threads", "messages", "events", "feed", "write_times", "counters", "idempotency_keys"} {
		if diff := cmp.Diff(storedRows(t, plain, table), storedRows(t, hot, table)); diff != "" {
			t.Errorf("%s: bun's rows (-) and the hot path's (+) differ:\n%s", table, diff)
		}
	}
}

// storedRows is every row of table, each column as SQLite stores it: its type and its text.
func storedRows(t *testing.T, db *storage.DB, table string) []string {
	t.Helper()
	ctx := context.Background()
	var cols []string
	if err := db.NewRaw("SELECT name FROM pragma_table_info(?)", table).Scan(ctx, &cols); err != nil || len(cols) == 0 {
		t.Fatalf("columns of %s: %v %v", table, cols, err)
	}
	var parts []string
	for _, c := range cols {
		parts = append(parts, `'`+c+`=' || typeof("`+c+`") || ':' || quote("`+c+`")`)
	}
	var rows []string
	if err := db.NewRaw("SELECT "+strings.Join(parts, " || ' ' || ")+" FROM "+table+" ORDER BY rowid").Scan(ctx, &rows); err != nil {
		t.Fatalf("rows of %s: %v", table, err)
	}
	if len(rows) == 0 && table != "events" {
		t.Fatalf("%s holds no row", table)
	}
	return rows
}

// A write on a SQLite forum that has prepared nothing yet lands while readers hold every other
// connection of the pool (exports streaming their snapshots, say): the write prepares its
// statements on its own connection. Before, it waited for a free one to prepare on, holding
// SQLite's one writer all the while, until a reader ended or the request's deadline did.
func TestSQLiteWritePreparesOnItsOwnConnection(t *testing.T) {
	db := storagetest.Open(t, storage.SQLite)
	const readers = 7 // the pool has 8 connections: the write gets the last one
	release := make(chan struct{})
	holding := make(chan struct{}, readers)
	done := make(chan error, readers)
	for range readers {
		go func() {
			done <- db.Snapshot(context.Background(), func(ctx context.Context, f *storage.Forum) error {
				if _, err := f.ThreadsPage(ctx, "", 0, 1); err != nil {
					return err
				}
				holding <- struct{}{}
				<-release
				return nil
			})
		}()
	}
	for range readers {
		<-holding
	}
	// Long enough for a loaded machine to write one thread, short against a wait without end.
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	err := db.Write(ctx, func(ctx context.Context, f *storage.Forum) error {
		now := storage.Now()
		th := storage.Thread{Title: "Q", State: "open", StateOrigin: "llm", ConfirmedState: "open",
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
	close(release)
	if err != nil {
		t.Errorf("the write beside %d readers: %v", readers, err)
	}
	for range readers {
		if err := <-done; err != nil {
			t.Errorf("a reader: %v", err)
		}
	}
}
