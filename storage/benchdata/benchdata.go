// Package benchdata seeds large forums for Parley's benchmarks in bulk, with one INSERT … SELECT
// per table, and writes rows exactly as the protocol would have written them for the same
// conversations: threads with their awaiting and inbox columns and positions, messages with
// their parents, depths and nearest asks, and the events of every state change.
//
// A seeded forum is a run of threads of Forum.ThreadSize messages each. Thread k (1-based) is
// asked by agent k-1; in most threads the next agent answers the ask and the following agents
// add notes under it, so the thread is answered (a proposal) and awaits its asker. Every
// Forum.OpenEvery-th thread has no answer: only notes, so it is open and awaits anyone but the
// asker. Conversation replays the same threads as envelopes, so that a test can send them
// through the protocol and compare.
package benchdata

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/uptrace/bun"

	"github.com/parleyforum/parley/storage"
)

// Forum describes a forum to seed. The zero value of a field means its default.
type Forum struct {
	Messages   int    // messages in all, rounded up to whole threads
	ThreadSize int    // messages per thread, at least 2: the ask, then an answer and notes (default 10)
	Agents     int    // distinct agents, at least ThreadSize (default 1000)
	OpenEvery  int    // every OpenEvery-th thread stays unanswered (default 10; 1 makes all open)
	Realm      string // the agents' realm (default "ainotes")
	// RowByRow seeds with the schema's triggers on, so that they write the feed (and on
	// Postgres announce every row) row by row, as they do for a send. The default pauses
	// them and writes the feed in bulk afterwards (pause.go), which is many times faster;
	// TestSeedRebuildsWhatTheTriggersWrite checks that both leave the same rows.
	RowByRow bool
	// RoomOf is the room of the k-th seeded thread (k from 1), as an SQL expression in k
	// that gives a room's id, e.g. "CASE WHEN k <= 50 THEN 2 ELSE 1 END"; the rooms must
	// exist. "" puts every thread in the room general. Seeding a thread in its room costs
	// nothing; moving it after the seed re-indexes its messages (on SQLite, whose search
	// index holds each message's room).
	RoomOf string
}

func (f Forum) withDefaults() (Forum, error) {
	if f.ThreadSize == 0 {
		f.ThreadSize = 10
	}
	if f.Agents == 0 {
		f.Agents = 1000
	}
	if f.OpenEvery == 0 {
		f.OpenEvery = 10
	}
	if f.Realm == "" {
		f.Realm = "ainotes"
	}
	switch {
	case f.Messages < 1:
		return f, fmt.Errorf("benchdata: a forum needs at least one message, not %d", f.Messages)
	case f.ThreadSize < 2:
		return f, fmt.Errorf("benchdata: thread size %d is below 2 (an ask and a reply)", f.ThreadSize)
	case f.Agents < f.ThreadSize:
		// Each message of a thread is by another agent, so no note replies to its own ask.
		return f, fmt.Errorf("benchdata: %d agents cannot fill threads of %d messages", f.Agents, f.ThreadSize)
	case f.OpenEvery < 1:
		return f, fmt.Errorf("benchdata: OpenEvery %d is below 1", f.OpenEvery)
	}
	return f, nil
}

// Threads is the number of threads the forum has.
func (f Forum) Threads() int {
	f, _ = f.withDefaults()
	return (f.Messages + f.ThreadSize - 1) / f.ThreadSize
}

// Agent is the identity of agent i (0-based).
func Agent(realm string, i int) string { return realm + ":agent-" + strconv.Itoa(i) }

// Filler pads the bodies of answers and notes to a realistic length.
const Filler = "The limit is set per instance in the manifest; clients read it there " +
	"before they send, and the server enforces exactly the value it shows, so nobody has " +
	"to guess or retry."

// Question is the body (and so the title) of the ask that opens thread k.
func Question(k int) string {
	return "Question " + strconv.Itoa(k) + ": which limit applies to batch " + strconv.Itoa(k) + "?"
}

// Reply is the body of the j-th message (j ≥ 1) of thread k, of kind "answer" or "note".
func Reply(kind string, k, j int) string {
	label := "Note "
	if kind == "answer" {
		label = "Answer "
	}
	return label + strconv.Itoa(k) + "." + strconv.Itoa(j) + ": " + Filler
}

// Step is one message of a seeded conversation, as the protocol would receive it.
type Step struct {
	Agent int    // who sends it (index for Agent)
	Kind  string // "ask", "answer" or "note"
	Body  string
}

// Conversation is thread k of the forum as the envelopes that would have made it, in order:
// the first opens the thread, every other goes into it with its default parent.
func (f Forum) Conversation(k int) []Step {
	f, _ = f.withDefaults()
	steps := []Step{{Agent: (k - 1) % f.Agents, Kind: "ask", Body: Question(k)}}
	answered := k%f.OpenEvery != 0
	for j := 1; j < f.ThreadSize; j++ {
		kind := "note"
		if answered && j == 1 {
			kind = "answer"
		}
		steps = append(steps, Step{Agent: (k - 1 + j) % f.Agents, Kind: kind, Body: Reply(kind, k, j)})
	}
	return steps
}

// Seeded tells what Seed wrote.
type Seeded struct {
	Threads, Messages, Events int
	// FirstThread and LastThread are the ids of the first and the last seeded thread.
	FirstThread, LastThread int64
}

// seedArgs are the named arguments (?name) of the seeding statements.
type seedArgs struct {
	Threads  int    `bun:"threads"`  // threads to write
	Size     int    `bun:"size"`     // messages per thread
	Agents   int    `bun:"agents"`   // distinct agents
	Open     int    `bun:"open"`     // every open-th thread is unanswered
	Realm    string `bun:"realm"`    // realm of the agents
	Filler   string `bun:"filler"`   // the tail of every reply body
	Start    string `bun:"start"`    // the time of the first message (whole seconds, UTC)
	TBase    int64  `bun:"tbase"`    // thread ids start after it
	MBase    int64  `bun:"mbase"`    // message ids start after it
	EBase    int64  `bun:"ebase"`    // event ids start after it
	SeqBase  int64  `bun:"seqbase"`  // inbox sequence numbers start after it
	Messages int    `bun:"messages"` // threads × size
}

// Seed writes the forum f into db in one transaction, after whatever db holds already, and
// then refreshes the planner's statistics (and, on Postgres, the visibility map) as a forum
// that has been running a while would have them.
func Seed(ctx context.Context, db *storage.DB, f Forum) (Seeded, error) {
	f, err := f.withDefaults()
	if err != nil {
		return Seeded{}, err
	}
	threads := f.Threads()
	// Seconds before now, so that what is sent after the seed is newer than all of it.
	start := time.Now().UTC().Add(-time.Duration(threads*f.ThreadSize+60) * time.Second).Truncate(time.Second)
	a := seedArgs{
		Threads: threads, Size: f.ThreadSize, Agents: f.Agents, Open: f.OpenEvery,
		Realm: f.Realm, Filler: Filler, Start: start.Format("2006-01-02 15:04:05") + "+00:00",
		Messages: threads * f.ThreadSize,
	}
	d := dialectOf(db.Kind())
	err = db.Tx(ctx, func(ctx context.Context, tx bun.Tx) error {
		for _, max := range []struct {
			dst   *int64
			query string
		}{
			{&a.TBase, "SELECT COALESCE(MAX(id), 0) FROM threads"},
			{&a.MBase, "SELECT COALESCE(MAX(id), 0) FROM messages"},
			{&a.EBase, "SELECT COALESCE(MAX(id), 0) FROM events"},
			{&a.SeqBase, d.seqNow},
		} {
			if err := tx.NewRaw(max.query).Scan(ctx, max.dst); err != nil {
				return fmt.Errorf("benchdata: %s: %w", max.query, err)
			}
		}
		var resume []string
		if !f.RowByRow {
			var err error
			if resume, err = pause(ctx, tx, db.Kind()); err != nil {
				return err
			}
		}
		for _, stmt := range []string{
			d.series("?threads") + insertThreads(d, f.RoomOf),
			d.series("?messages") + insertMessages(d),
			d.series("?threads") + insertOpenEvents(d),
			d.series("?threads") + insertAnswerEvents(d),
		} {
			if _, err := tx.NewRaw(stmt, &a).Exec(ctx); err != nil {
				return fmt.Errorf("benchdata: seeding: %w", err)
			}
		}
		if !f.RowByRow {
			resume = append(feedRebuild, resume...)
		}
		for _, stmt := range append(resume, d.after...) {
			if _, err := tx.NewRaw(stmt, &a).Exec(ctx); err != nil {
				return fmt.Errorf("benchdata: %s: %w", stmt, err)
			}
		}
		return nil
	})
	if err != nil {
		return Seeded{}, err
	}
	for _, stmt := range d.analyze {
		if _, err := db.ExecContext(ctx, stmt); err != nil {
			return Seeded{}, fmt.Errorf("benchdata: %s: %w", stmt, err)
		}
	}
	answered := threads - threads/f.OpenEvery
	return Seeded{
		Threads: threads, Messages: a.Messages, Events: threads + answered,
		FirstThread: a.TBase + 1, LastThread: a.TBase + int64(threads),
	}, nil
}

// dialect holds the few fragments that differ between the databases.
type dialect struct {
	series  func(count string) string // a CTE "series(n)" of 1 … count
	at      func(n string) string     // the time of the n-th seeded message
	xact    string                    // the inbox_tx of the seeding transaction
	seqNow  string                    // the last inbox sequence number handed out
	after   []string                  // statements that end the seeding transaction
	analyze []string                  // statements run after it committed
}

func dialectOf(kind storage.Kind) dialect {
	if kind == storage.Postgres {
		return dialect{
			series: func(count string) string {
				return "WITH series (n) AS (SELECT generate_series(1, " + count + ")) "
			},
			at: func(n string) string {
				return "(CAST(?start AS timestamptz) + (" + n + ") * interval '1 second')"
			},
			xact:   "pg_current_xact_id()::text::bigint",
			seqNow: "SELECT nextval('inbox_seq')",
			after: []string{
				"SELECT setval('inbox_seq', ?seqbase + ?threads)",
				"SELECT setval(pg_get_serial_sequence('threads', 'id'), ?tbase + ?threads)",
				"SELECT setval(pg_get_serial_sequence('messages', 'id'), ?mbase + ?messages)",
				"SELECT setval(pg_get_serial_sequence('events', 'id'), (SELECT MAX(id) FROM events))",
			},
			analyze: []string{"VACUUM (ANALYZE) threads, messages, events"},
		}
	}
	return dialect{
		series: func(count string) string {
			return "WITH RECURSIVE series (n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM series WHERE n < " + count + ") "
		},
		at: func(n string) string {
			return "strftime('%Y-%m-%d %H:%M:%S+00:00', ?start, '+' || (" + n + ") || ' seconds')"
		},
		xact:    "0",
		seqNow:  "SELECT value FROM counters WHERE name = 'inbox'",
		after:   []string{"UPDATE counters SET value = ?seqbase + ?threads WHERE name = 'inbox'"},
		analyze: []string{"ANALYZE"},
	}
}

// The statements below read the series as n. For a thread, n is k; for a message, k is its
// thread and j its place in it (0 is the ask). Thread k is answered unless k % open = 0.
//
// Ids, derived: thread k is tbase + k; its message j is mbase + (k-1)·size + j + 1; its open
// event is ebase + 2(k-1) - (k-1)/open + 1, and an answered thread's answer event the next
// id. That is the order in which sending the conversations one after the other numbers them.

const (
	rootOf      = "(?mbase + (k - 1) * ?size + 1)"
	openEventOf = "(?ebase + 2 * (k - 1) - (k - 1) / ?open + 1)"
	answeredK   = "(k % ?open <> 0)"
	creatorOf   = "(?realm || ':agent-' || ((k - 1) % ?agents))"
)

func insertThreads(d dialect, roomOf string) string {
	if roomOf == "" {
		roomOf = strconv.FormatInt(storage.GeneralRoom, 10)
	}
	return `INSERT INTO threads (id, title, state, state_origin, state_confirmed_at, confirmed_state,
		state_event_id, creator, creator_extension, root_message_id, last_message_id, message_count,
		awaiting_mode, awaiting_identity, awaiting_extension, awaiting_set_by,
		inbox_to, inbox_tx, inbox_seq, created_at, updated_at, room_id)
	SELECT ?tbase + k,
		'Question ' || k || ': which limit applies to batch ' || k || '\?',
		CASE WHEN ` + answeredK + ` THEN 'answered' ELSE 'open' END,
		'llm',
		CASE WHEN ` + answeredK + ` THEN NULL ELSE ` + d.at("(k - 1) * ?size") + ` END,
		'open',
		CASE WHEN ` + answeredK + ` THEN ` + openEventOf + ` + 1 ELSE ` + openEventOf + ` END,
		` + creatorOf + `, '',
		` + rootOf + `, ` + rootOf + ` + ?size - 1, ?size,
		CASE WHEN ` + answeredK + ` THEN 'to' ELSE 'any' END,
		` + creatorOf + `, '',
		CASE WHEN ` + answeredK + ` THEN ` + rootOf + ` + 1 ELSE ` + rootOf + ` END,
		CASE WHEN ` + answeredK + ` THEN ` + creatorOf + ` ELSE '*' END,
		` + d.xact + `, ?seqbase + k,
		` + d.at("(k - 1) * ?size") + `, ` + d.at("k * ?size - 1") + `,
		` + escapeArgs(roomOf) + `
	FROM (SELECT n AS k FROM series) AS s`
}

func insertMessages(d dialect) string {
	answer := answeredK + " AND j = 1"
	return `INSERT INTO messages (id, thread_id, parent_id, depth, ask_id, kind, identity, extension,
		author_kind, body, provenance_model, provenance_client, created_at,
		awaiting_mode, awaiting_identity, awaiting_extension, awaiting_set_by)
	SELECT ?mbase + n, ?tbase + k,
		CASE WHEN j = 0 THEN NULL ELSE ` + rootOf + ` END,
		CASE WHEN j = 0 THEN 0 ELSE 1 END,
		CASE WHEN j = 0 THEN NULL ELSE ` + rootOf + ` END,
		CASE WHEN j = 0 THEN 'ask' WHEN ` + answer + ` THEN 'answer' ELSE 'note' END,
		?realm || ':agent-' || ((k - 1 + j) % ?agents), '', 'llm',
		CASE WHEN j = 0 THEN 'Question ' || k || ': which limit applies to batch ' || k || '\?'
			WHEN ` + answer + ` THEN 'Answer ' || k || '.' || j || ': ' || ?filler
			ELSE 'Note ' || k || '.' || j || ': ' || ?filler END,
		NULL, NULL,
		` + d.at("n - 1") + `,
		CASE WHEN ` + answeredK + ` AND j >= 1 THEN 'to' ELSE 'any' END,
		` + creatorOf + `, '',
		CASE WHEN j = 0 OR (` + answer + `) THEN NULL
			WHEN ` + answeredK + ` THEN ` + rootOf + ` + 1
			ELSE ` + rootOf + ` END
	FROM (SELECT n, (n - 1) / ?size + 1 AS k, (n - 1) % ?size AS j FROM series) AS s`
}

func insertOpenEvents(d dialect) string {
	return `INSERT INTO events (id, thread_id, subject, act, from_state, to_state, origin,
		actor_identity, actor_extension, label, message_id, confirmed, confirmed_at,
		confirms_event_id, at)
	SELECT ` + openEventOf + `, ?tbase + k, 'th_' || (?tbase + k), 'ask', NULL, 'open', 'llm',
		` + creatorOf + `, '', ` + creatorOf + `, ` + rootOf + `, TRUE,
		` + d.at("(k - 1) * ?size") + `, NULL, ` + d.at("(k - 1) * ?size") + `
	FROM (SELECT n AS k FROM series) AS s`
}

func insertAnswerEvents(d dialect) string {
	answerer := "(?realm || ':agent-' || (k % ?agents))"
	return `INSERT INTO events (id, thread_id, subject, act, from_state, to_state, origin,
		actor_identity, actor_extension, label, message_id, confirmed, confirmed_at,
		confirms_event_id, at)
	SELECT ` + openEventOf + ` + 1, ?tbase + k, 'th_' || (?tbase + k), 'answer', 'open', 'answered',
		'llm', ` + answerer + `, '', ` + answerer + `, ` + rootOf + ` + 1, FALSE, NULL, NULL,
		` + d.at("(k - 1) * ?size + 1") + `
	FROM (SELECT n AS k FROM series) AS s
	WHERE ` + answeredK + ``
}
