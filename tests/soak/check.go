package soak

import (
	"context"
	"fmt"
	"sort"
	"time"

	"github.com/parleyforum/parley/storage"
)

// Consistency is what the check of the database found.
type Consistency struct {
	Messages, Threads, Events int // stored
	Acknowledged              int // writes the server acknowledged: every one found, once
	Retried                   int // writes sent more than once under their idempotency key
	Doubles                   int // copies beyond the first of any write: each one a problem
	LandedUnacknowledged      int // writes never acknowledged that landed all the same
	NeverLanded               int // writes never acknowledged and not stored

	ids []int64 // every stored message
}

type dbMessage struct {
	ID                int64  `bun:"id"`
	ThreadID          int64  `bun:"thread_id"`
	ParentID          *int64 `bun:"parent_id"`
	Kind              string `bun:"kind"`
	Body              string `bun:"body"`
	AwaitingMode      string `bun:"awaiting_mode"`
	AwaitingIdentity  string `bun:"awaiting_identity"`
	AwaitingExtension string `bun:"awaiting_extension"`
	AwaitingSetBy     *int64 `bun:"awaiting_set_by"`
}

type dbThread struct {
	ID                int64   `bun:"id"`
	State             string  `bun:"state"`
	StateEventID      *int64  `bun:"state_event_id"`
	RootMessageID     *int64  `bun:"root_message_id"`
	LastMessageID     *int64  `bun:"last_message_id"`
	MessageCount      int     `bun:"message_count"`
	AwaitingMode      string  `bun:"awaiting_mode"`
	AwaitingIdentity  string  `bun:"awaiting_identity"`
	AwaitingExtension string  `bun:"awaiting_extension"`
	AwaitingSetBy     *int64  `bun:"awaiting_set_by"`
	InboxTo           *string `bun:"inbox_to"`
	InboxTx           int64   `bun:"inbox_tx"`
	InboxSeq          int64   `bun:"inbox_seq"`
}

type dbEvent struct {
	ID        int64   `bun:"id"`
	ThreadID  int64   `bun:"thread_id"`
	Act       string  `bun:"act"`
	FromState *string `bun:"from_state"`
	ToState   string  `bun:"to_state"`
	MessageID *int64  `bun:"message_id"`
}

// checkDatabase reads the database itself, with the server stopped, against the ledger.
func checkDatabase(ctx context.Context, dbURL string, writes []write, problem func(string, ...any)) (Consistency, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	db, err := storage.Open(ctx, dbURL)
	if err != nil {
		return Consistency{}, err
	}
	defer db.Close()
	var msgs []dbMessage
	var threads []dbThread
	var events []dbEvent
	for _, q := range []struct {
		sql  string
		into any
	}{
		{`SELECT id, thread_id, parent_id, kind, body, awaiting_mode, awaiting_identity, awaiting_extension,
			awaiting_set_by FROM messages ORDER BY id`, &msgs},
		{`SELECT id, state, state_event_id, root_message_id, last_message_id, message_count, awaiting_mode,
			awaiting_identity, awaiting_extension, awaiting_set_by, inbox_to, inbox_tx, inbox_seq FROM threads ORDER BY id`, &threads},
		{`SELECT id, thread_id, act, from_state, to_state, message_id FROM events WHERE subject LIKE 'th\_%' ESCAPE '\' ORDER BY id`, &events},
	} {
		if err := db.NewRaw(q.sql).Scan(ctx, q.into); err != nil {
			return Consistency{}, fmt.Errorf("%s: %v", q.sql, err)
		}
	}
	c := Consistency{Messages: len(msgs), Threads: len(threads), Events: len(events)}
	for _, m := range msgs {
		c.ids = append(c.ids, m.ID)
	}
	byID := make(map[int64]*dbMessage, len(msgs))
	byMarker := map[string][]*dbMessage{}
	for i := range msgs {
		m := &msgs[i]
		byID[m.ID] = m
		if marker, ok := markerOf(m.Body); ok {
			byMarker[marker] = append(byMarker[marker], m)
		}
	}

	// Every write of the ledger: acknowledged ones stored as sent, once; every write at most
	// once, however often it was sent — its retries carried its idempotency key (§ 15).
	known := map[string]bool{}
	for _, w := range writes {
		known[w.marker] = true
		stored := byMarker[w.marker]
		if w.attempts > 1 {
			c.Retried++
		}
		if len(stored) > 1 {
			c.Doubles += len(stored) - 1
			problem("%s: stored %d times after %d attempts under one idempotency key: a double landing", w.marker, len(stored), w.attempts)
		}
		for _, m := range stored {
			if m.Body != w.body || m.Kind != w.kind || (w.thread != 0 && m.ThreadID != w.thread) {
				problem("%s: stored as msg_%d, a %s in th_%d, but sent as a %s to th_%d", w.marker, m.ID, m.Kind, m.ThreadID, w.kind, w.thread)
			}
		}
		if !w.acked {
			if len(stored) == 0 {
				c.NeverLanded++
			}
			c.LandedUnacknowledged += len(stored)
			continue
		}
		c.Acknowledged++
		m := byID[w.id]
		switch {
		case m == nil:
			problem("%s: acknowledged as msg_%d in th_%d, and lost", w.marker, w.id, w.ackThread)
			continue
		case m.Body != w.body || m.ThreadID != w.ackThread:
			problem("%s: acknowledged as msg_%d in th_%d, but msg_%d is %q in th_%d", w.marker, w.id, w.ackThread, w.id, m.Body, m.ThreadID)
		}
	}
	for marker, stored := range byMarker {
		if !known[marker] {
			problem("%s: %d messages (msg_%d …) that no client of the run sent in full", marker, len(stored), stored[0].ID)
		}
	}

	// Every thread: its counters are its messages, its awaiting its last message's, its
	// events replay to its state, its inbox position is where its turn says.
	type tally struct {
		count      int
		root, last int64
	}
	tallies := map[int64]*tally{}
	for _, m := range msgs {
		t := tallies[m.ThreadID]
		if t == nil {
			t = &tally{}
			tallies[m.ThreadID] = t
		}
		t.count++
		t.last = m.ID
		if m.ParentID == nil && t.root == 0 {
			t.root = m.ID
		}
	}
	eventsOf := map[int64][]dbEvent{}
	for _, e := range events {
		eventsOf[e.ThreadID] = append(eventsOf[e.ThreadID], e)
		if e.MessageID != nil && (byID[*e.MessageID] == nil || byID[*e.MessageID].ThreadID != e.ThreadID) {
			problem("ev_%d of th_%d names msg_%d of another thread", e.ID, e.ThreadID, *e.MessageID)
		}
	}
	positions := map[[2]int64]int64{}
	var maxSeq int64
	for _, th := range threads {
		t := tallies[th.ID]
		if t == nil {
			problem("th_%d has no message", th.ID)
			continue
		}
		if th.MessageCount != t.count {
			problem("th_%d: message_count %d, %d messages stored", th.ID, th.MessageCount, t.count)
		}
		if th.LastMessageID == nil || *th.LastMessageID != t.last {
			problem("th_%d: last_message_id %v, the newest message is msg_%d", th.ID, deref(th.LastMessageID), t.last)
		}
		if th.RootMessageID == nil || *th.RootMessageID != t.root {
			problem("th_%d: root_message_id %v, the first message is msg_%d", th.ID, deref(th.RootMessageID), t.root)
		}
		if last := byID[t.last]; last != nil && (last.AwaitingMode != th.AwaitingMode || last.AwaitingIdentity != th.AwaitingIdentity ||
			last.AwaitingExtension != th.AwaitingExtension || setBy(last) != deref(th.AwaitingSetBy)) {
			problem("th_%d: awaits %s %s/%s set by %d, its last message msg_%d %s %s/%s set by %d", th.ID,
				th.AwaitingMode, th.AwaitingIdentity, th.AwaitingExtension, deref(th.AwaitingSetBy),
				last.ID, last.AwaitingMode, last.AwaitingIdentity, last.AwaitingExtension, setBy(last))
		}
		state := ""
		for i, e := range eventsOf[th.ID] {
			from := ""
			if e.FromState != nil {
				from = *e.FromState
			}
			if (i == 0) != (e.FromState == nil) || from != state {
				problem("th_%d: ev_%d (%s) goes from %q, but the state was %q", th.ID, e.ID, e.Act, from, state)
			}
			state = e.ToState
		}
		if evs := eventsOf[th.ID]; len(evs) == 0 || th.StateEventID == nil || *th.StateEventID != evs[len(evs)-1].ID {
			problem("th_%d: state_event_id %v is not its last event", th.ID, deref(th.StateEventID))
		}
		if state != th.State {
			problem("th_%d: its events replay to %q, it says %q", th.ID, state, th.State)
		}
		wantInbox := map[string]string{storage.AwaitingNone: "", storage.AwaitingTo: th.AwaitingIdentity, storage.AwaitingAny: storage.InboxAny}[th.AwaitingMode]
		if got := derefString(th.InboxTo); got != wantInbox {
			problem("th_%d: inbox_to %q, but it awaits %s %q", th.ID, got, th.AwaitingMode, th.AwaitingIdentity)
		}
		pos := [2]int64{th.InboxTx, th.InboxSeq}
		if other, ok := positions[pos]; ok {
			problem("th_%d and th_%d share the inbox position %v", other, th.ID, pos)
		}
		positions[pos] = th.ID
		maxSeq = max(maxSeq, th.InboxSeq)
	}
	for id := range tallies {
		if !containsThread(threads, id) {
			problem("messages of th_%d, a thread that does not exist", id)
		}
	}

	// The counters beside the rows: the inbox position has passed every thread's, every
	// message and event is in the feed once, every counted write is a stored one.
	var seqQuery string
	if db.Kind() == storage.Postgres {
		seqQuery = "SELECT last_value FROM inbox_seq"
	} else {
		seqQuery = "SELECT value FROM counters WHERE name = 'inbox'"
	}
	var counter int64
	if err := db.NewRaw(seqQuery).Scan(ctx, &counter); err != nil {
		return c, fmt.Errorf("%s: %v", seqQuery, err)
	}
	if counter < maxSeq {
		problem("the inbox counter is at %d, behind th_ at inbox_seq %d", counter, maxSeq)
	}
	// Read whole and counted here: a correlated query per row would take minutes on a
	// soak's million rows, and the feed has no index by message.
	var feed []struct {
		MessageID *int64 `bun:"message_id"`
		EventID   *int64 `bun:"event_id"`
	}
	if err := db.NewRaw("SELECT message_id, event_id FROM feed").Scan(ctx, &feed); err != nil {
		return c, fmt.Errorf("reading the feed: %v", err)
	}
	inFeed := map[int64]int{}
	eventsInFeed := map[int64]int{}
	for _, f := range feed {
		switch {
		case f.MessageID != nil:
			inFeed[*f.MessageID]++
		case f.EventID != nil:
			eventsInFeed[*f.EventID]++
		default:
			problem("a feed entry of no message and no event")
		}
	}
	for _, m := range msgs {
		if n := inFeed[m.ID]; n != 1 {
			problem("msg_%d is %d times in the feed", m.ID, n)
		}
	}
	var allEvents []int64
	if err := db.NewRaw("SELECT id FROM events").Scan(ctx, &allEvents); err != nil {
		return c, fmt.Errorf("reading the events: %v", err)
	}
	for _, id := range allEvents {
		if n := eventsInFeed[id]; n != 1 {
			problem("ev_%d is %d times in the feed", id, n)
		}
	}
	if len(inFeed) != len(msgs) || len(eventsInFeed) != len(allEvents) {
		problem("the feed has %d messages and %d events, the tables %d and %d", len(inFeed), len(eventsInFeed), len(msgs), len(allEvents))
	}

	// A counted write is a stored one: a send that failed counted nothing.
	var counted, written []struct {
		Identity string    `bun:"identity"`
		At       time.Time `bun:"at"`
	}
	if err := db.NewRaw("SELECT identity, at FROM write_times").Scan(ctx, &counted); err != nil {
		return c, fmt.Errorf("reading write_times: %v", err)
	}
	if err := db.NewRaw("SELECT identity, created_at AS at FROM messages").Scan(ctx, &written); err != nil {
		return c, fmt.Errorf("reading the messages' times: %v", err)
	}
	type stamp struct {
		identity string
		at       int64
	}
	stored := make(map[stamp]bool, len(written))
	for _, w := range written {
		stored[stamp{w.Identity, w.At.UnixMicro()}] = true
	}
	for _, w := range counted {
		if !stored[stamp{w.Identity, w.At.UnixMicro()}] {
			problem("a write of %s at %v is counted, but no message of it is stored", w.Identity, w.At)
		}
	}
	return c, nil
}

// setBy is the message that set a message's awaiting: stored when another did, the message
// itself (stored as NULL, its id being unknown before the insert) when it set its own.
func setBy(m *dbMessage) int64 {
	if m.AwaitingSetBy != nil {
		return *m.AwaitingSetBy
	}
	if m.AwaitingMode == "" {
		return 0
	}
	return m.ID
}

func containsThread(threads []dbThread, id int64) bool {
	i := sort.Search(len(threads), func(i int) bool { return threads[i].ID >= id })
	return i < len(threads) && threads[i].ID == id
}

func deref(p *int64) int64 {
	if p == nil {
		return 0
	}
	return *p
}

func derefString(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}
