package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/parleyforum/parley/protocol"
	"github.com/parleyforum/parley/storage"
	"github.com/parleyforum/parley/storage/benchdata"
)

// minMessages is the smallest forum the measurements fit in: the inbox reads need thread 25,
// the rare word is the number of thread 77, and the sends need threads of their own.
const minMessages = 1000

// rareWord is in the ten messages of thread 77 alone (its question and the numbers of its
// replies), whatever the forum's size; commonWord is in every question, a tenth of the forum.
const (
	rareThread = 77
	rareWord   = "77"
	commonWord = "batch"
)

// pageSize is the page of the list and search reads.
const pageSize = 20

// inboxReader is the agent whose inbox is read: the asker of every thousandth thread, and an
// agent that every unanswered thread is open to. It is the reader of BenchmarkInbox.
const inboxReader = 7

// sender sends the measured replies: an agent outside the seeded forum, so that no reply is
// its own thread's or answers itself.
const sender = 5000

// forum is a seeded forum, made ready for the operations: the reader has caught up with its
// inbox and a few items are new since, and the cursors and threads the reads use are known.
type forum struct {
	svc      *protocol.Service
	seeded   benchdata.Seeded
	seedTime time.Duration

	inboxSince []byte // {"since": …}: the reader's cursor before the new items
	inboxItems int    // what a read with it returns
	// inboxSinceRoom is {"since": …, "room": "team"}: the cursor of the inbox filtered to the
	// room that holds the five new items, taken at the same point.
	inboxSinceRoom []byte
	teamRooms      map[string]bool // the keys of team and team-inner
	readThread     []byte          // {"thread": …}: a seeded thread in the middle of the forum
	laterPage      []byte          // {"cursor": …}: the list's page halfway through the forum
	sendThreads    []replyTarget
}

type replyTarget struct{ thread, root string }

func agent(i int) *protocol.Actor {
	a := &protocol.Actor{Identity: benchdata.Agent("ainotes", i)}
	a.Rights, _ = protocol.ParseRights("read,write")
	return a
}

// newForum seeds a forum of size messages into db, which must be empty, and prepares it for
// rounds rounds of the operations.
func newForum(ctx context.Context, db *storage.DB, size, rounds int) (*forum, error) {
	limits := protocol.DefaultLimits()
	limits.WritesPerMinute = 1 << 30 // measure the sends, not the rate limit
	f := &forum{svc: protocol.New(db, protocol.Options{Limits: limits})}
	began := time.Now()
	roomOf, err := f.makeRooms(ctx)
	if err != nil {
		return nil, err
	}
	if f.seeded, err = benchdata.Seed(ctx, db, benchdata.Forum{Messages: size, RoomOf: roomOf}); err != nil {
		return nil, err
	}
	if f.seeded.FirstThread != 1 {
		return nil, fmt.Errorf("the forum must be seeded into an empty database: its first thread is %d", f.seeded.FirstThread)
	}
	f.seedTime = time.Since(began)
	if err := f.prepareInbox(ctx); err != nil {
		return nil, fmt.Errorf("inbox: %w", err)
	}
	if err := f.prepareList(ctx); err != nil {
		return nil, fmt.Errorf("list_threads: %w", err)
	}
	middle := f.seeded.Threads / 2
	f.readThread = []byte(`{"thread":"` + protocol.ThreadKey(int64(middle)) + `"}`)
	// The replies go into threads after the middle one, one each, none of them the reader's.
	for k := middle + 1; len(f.sendThreads) < rounds; k++ {
		if k > f.seeded.Threads {
			return nil, fmt.Errorf("%d threads are too few for %d sends", f.seeded.Threads, rounds)
		}
		if (k-1)%1000 == inboxReader {
			continue
		}
		th, err := db.Read().Thread(ctx, int64(k))
		if err != nil {
			return nil, err
		}
		f.sendThreads = append(f.sendThreads, replyTarget{protocol.ThreadKey(th.ID), protocol.MessageKey(*th.RootMessageID)})
	}
	return f, nil
}

// prepareInbox catches the reader up, as an agent does, by paging until nothing more; then
// sends five new items for it — three asks open to anyone, an answer in its own thread 8, an
// ask under its note, message 8 — among five answers elsewhere that are not its. All of them
// are in the room team, so that the inbox filtered to it finds the same five.
func (f *forum) prepareInbox(ctx context.Context) error {
	reader := agent(inboxReader)
	// The reader's reads are complete only once what is committed is behind the horizon:
	// on a Postgres server others use too, their transactions can hold it back.
	if err := f.svc.DB().AwaitHorizon(ctx, horizonPatience); err != nil {
		return err
	}
	// A cursor belongs to its list: the inbox and the inbox of the room each have their own.
	cursor, err := catchUpInbox(ctx, f.svc, reader, "")
	if err != nil {
		return err
	}
	roomCursor, err := catchUpInbox(ctx, f.svc, reader, `,"room":"`+roomName+`"`)
	if err != nil {
		return err
	}
	sends := []struct {
		from int
		env  string
	}{
		{101, `{"kind":"ask","room":"` + roomName + `","body":"A new question 1"}`},
		{102, `{"kind":"ask","room":"` + roomName + `","body":"A new question 2"}`},
		{103, `{"kind":"ask","room":"` + roomName + `","body":"A new question 3"}`},
		{200, `{"kind":"answer","thread":"th_8","body":"A new answer."}`},
		{200, `{"kind":"ask","parent":"msg_8","body":"A question for the reader."}`},
	}
	for k := 21; k <= 25; k++ {
		sends = append(sends, struct {
			from int
			env  string
		}{300, `{"kind":"answer","thread":"th_` + strconv.Itoa(k) + `","body":"Not for the reader."}`})
	}
	for _, s := range sends {
		if _, err := f.svc.Send(ctx, agent(s.from), []byte(s.env)); err != nil {
			return fmt.Errorf("%s sends %s: %w", agent(s.from).Identity, s.env, err)
		}
	}
	if err := f.svc.DB().AwaitHorizon(ctx, horizonPatience); err != nil {
		return err
	}
	f.inboxSince = []byte(`{"since":"` + cursor + `"}`)
	f.inboxSinceRoom = []byte(`{"since":"` + roomCursor + `","room":"` + roomName + `"}`)
	for _, req := range [][]byte{f.inboxSince, f.inboxSinceRoom} {
		res, err := f.svc.Inbox(ctx, reader, req)
		if err != nil {
			return err
		}
		if f.inboxItems = len(res.Items); f.inboxItems != 5 {
			return fmt.Errorf("the reader sees %d new items with %s, want 5", f.inboxItems, req)
		}
	}
	return nil
}

// catchUpInbox reads the reader's inbox (with the filters of filters, ",…" members of the
// request) to its end and answers the cursor there.
func catchUpInbox(ctx context.Context, svc *protocol.Service, reader *protocol.Actor, filters string) (string, error) {
	cursor := ""
	for {
		req := `{"limit":100` + filters + `}`
		if cursor != "" {
			req = `{"limit":100,"since":"` + cursor + `"` + filters + `}`
		}
		res, err := svc.Inbox(ctx, reader, []byte(req))
		if err != nil {
			return "", err
		}
		cursor = res.Cursor
		if !res.More {
			return cursor, nil
		}
	}
}

// horizonPatience bounds each wait of prepareInbox for the read horizon.
const horizonPatience = time.Minute

// prepareList pages through the threads, newest first, to the middle of the forum and keeps
// the cursor there: a later page costs what the first does only if the cursor is followed
// through the index, not counted off from the start.
func (f *forum) prepareList(ctx context.Context) error {
	half := f.seeded.Threads / 2
	page := min(f.svc.Limits().ListMaxItems, half)
	reader := agent(inboxReader)
	var cursor *string
	for seen := 0; seen < half; {
		req := `{"limit":` + strconv.Itoa(page) + `}`
		if cursor != nil {
			req = `{"limit":` + strconv.Itoa(page) + `,"cursor":"` + *cursor + `"}`
		}
		res, err := f.svc.ListThreads(ctx, reader, []byte(req))
		if err != nil {
			return err
		}
		if !res.More {
			return fmt.Errorf("the list ended after %d threads", seen+len(res.Threads))
		}
		seen += len(res.Threads)
		cursor = res.Cursor
	}
	f.laterPage = []byte(`{"limit":` + strconv.Itoa(pageSize) + `,"cursor":"` + *cursor + `"}`)
	return nil
}

// operation is one measured call of the operation layer; round numbers the calls.
type operation struct {
	name string
	run  func(ctx context.Context, round int) error
}

// operationNames are the operations in the order of the CSV file and the charts.
var operationNames = []string{
	"inbox_since", "read_thread", "list_threads_first", "list_threads_later",
	"search_rare", "search_common", "send_reply",
	"inbox_since_room", "list_threads_room", "search_rare_room", "search_common_room",
}

// operationTitles name the operations in the charts.
var operationTitles = map[string]string{
	"inbox_since":        "inbox with a since-cursor (5 new items)",
	"read_thread":        "read_thread (10 messages)",
	"list_threads_first": "list_threads, first page of 20",
	"list_threads_later": "list_threads, page of 20 halfway by cursor",
	"search_rare":        "search, a rare word (10 found)",
	"search_common":      "search, a common word (a tenth of the forum; page of 20)",
	"send_reply":         "send, a note into an existing thread",
	"inbox_since_room":   "inbox with a since-cursor, filtered to a room (5 new items)",
	"list_threads_room":  "list_threads filtered to a room of 100 threads, first page of 20",
	"search_rare_room":   "search in a room of 1,000 messages, a rare word (10 found)",
	"search_common_room": "search in a room of 1,000 messages, a common word (100 found; page of 20)",
}

// operations are the forum's measured calls, each with the check that it did its work.
func (f *forum) operations() []operation {
	reader := agent(inboxReader)
	ops := map[string]func(ctx context.Context, round int) error{
		"inbox_since": func(ctx context.Context, _ int) error {
			res, err := f.svc.Inbox(ctx, reader, f.inboxSince)
			return check(err, res != nil && len(res.Items) == f.inboxItems, res)
		},
		"read_thread": func(ctx context.Context, _ int) error {
			res, err := f.svc.ReadThread(ctx, reader, f.readThread)
			return check(err, res != nil && res.Thread.MessageCount == 10, res)
		},
		"list_threads_first": func(ctx context.Context, _ int) error {
			res, err := f.svc.ListThreads(ctx, reader, []byte(`{"limit":`+strconv.Itoa(pageSize)+`}`))
			return check(err, res != nil && len(res.Threads) == pageSize, res)
		},
		"list_threads_later": func(ctx context.Context, _ int) error {
			res, err := f.svc.ListThreads(ctx, reader, f.laterPage)
			return check(err, res != nil && len(res.Threads) == pageSize, res)
		},
		"search_rare": func(ctx context.Context, _ int) error {
			res, err := f.svc.Search(ctx, reader, []byte(`{"q":"`+rareWord+`","limit":`+strconv.Itoa(pageSize)+`}`))
			return check(err, res != nil && len(res.Results) == f.seededThreadSize(), res)
		},
		"search_common": func(ctx context.Context, _ int) error {
			res, err := f.svc.Search(ctx, reader, []byte(`{"q":"`+commonWord+`","limit":`+strconv.Itoa(pageSize)+`}`))
			return check(err, res != nil && len(res.Results) == pageSize && res.More, res)
		},
		"inbox_since_room": func(ctx context.Context, _ int) error {
			res, err := f.svc.Inbox(ctx, reader, f.inboxSinceRoom)
			return check(err, res != nil && len(res.Items) == f.inboxItems, res)
		},
		"list_threads_room": func(ctx context.Context, _ int) error {
			res, err := f.svc.ListThreads(ctx, reader, []byte(`{"limit":`+strconv.Itoa(pageSize)+`,"room":"`+roomName+`"}`))
			return check(err, res != nil && len(res.Threads) == pageSize && f.inRoom(res.Threads), res)
		},
		"search_rare_room": func(ctx context.Context, _ int) error {
			res, err := f.svc.Search(ctx, reader, []byte(`{"q":"`+rareWord+`","limit":`+strconv.Itoa(pageSize)+`,"room":"`+roomName+`"}`))
			return check(err, res != nil && len(res.Results) == f.seededThreadSize(), res)
		},
		"search_common_room": func(ctx context.Context, _ int) error {
			res, err := f.svc.Search(ctx, reader, []byte(`{"q":"`+commonWord+`","limit":`+strconv.Itoa(pageSize)+`,"room":"`+roomName+`"}`))
			return check(err, res != nil && len(res.Results) == pageSize && res.More && hitsInRoom(res.Results), res)
		},
		"send_reply": func(ctx context.Context, round int) error {
			t := f.sendThreads[round]
			env := `{"kind":"note","thread":"` + t.thread + `","parent":"` + t.root +
				`","body":"Measured note ` + strconv.Itoa(round) + `: ` + benchdata.Filler + `"}`
			res, err := f.svc.Send(ctx, agent(sender), []byte(env))
			return check(err, res != nil && res.Thread.ID == t.thread, res)
		},
	}
	out := make([]operation, len(operationNames))
	for i, name := range operationNames {
		out[i] = operation{name: name, run: ops[name]}
	}
	return out
}

// seededThreadSize is the messages per seeded thread: what the rare word finds.
func (f *forum) seededThreadSize() int { return f.seeded.Messages / f.seeded.Threads }

// check turns a call's error, or a result that is not what the forum holds, into an error.
func check(err error, ok bool, res any) error {
	if err != nil {
		return err
	}
	if !ok {
		b, _ := json.Marshal(res)
		if len(b) > 500 {
			b = append(b[:500], "…"...)
		}
		return fmt.Errorf("unexpected result %s", b)
	}
	return nil
}
