package main

import (
	"fmt"
	"strings"
)

// The pgbench baseline: the rows that Parley's sends write on Postgres, written by pgbench
// from a script, as fast as Postgres takes them. It is the physical limit a send is measured
// against — what the database costs, with no server, no checks and no reads before the
// writes.
//
// Every pgbench client plays the conversation of cycle again and again: it asks a question as
// its own identity, a second identity of the client (its replier) answers and notes under it,
// then the asker decides and closes. Each step is one transaction with what one send writes:
//
//   - the writes_per_minute record: the identity's advisory lock, the delete of its records
//     older than a minute, the count (the identity's row of write_counts, kept by a trigger)
//     and the insert of write_times (storage/write_rate.go);
//   - for an ask, the thread;
//   - the message (its search column is computed by Postgres in the insert);
//   - the event, when the thread's state changes;
//   - the thread's update: count, last message, state, awaiting, and its inbox position
//     (pg_current_xact_id(), nextval('inbox_seq')) when the turn moves;
//   - and, by the triggers of the schema, a feed row per message and event and the
//     notifications of the feed and the inbox, as for a send.
//
// The test TestPgbenchWritesWhatSendsWrite runs the script and real sends and compares the
// rows, so that a change of what a send writes fails it until the script follows.
//
// What it leaves out, on purpose: the token lookup and the reads of the parent and the thread
// (the server's reads), and the row lock waits of replies from many agents to one thread
// (each client writes its own thread). Each statement is its own round trip, as the issue's
// baseline was defined: `pgbench -M prepared`, prepared statements, no pipeline.

// cycleStep is one send of the baseline's conversation: its kind, the thread's state before
// and after it, and whether it moves the thread in the inbox.
type cycleStep struct {
	kind     string
	from, to string
	replier  bool // sent by the replier, not the asker
}

// cycle is one question's life, as the load's agents live it on average (conversation.go: a
// decision after decideAfter replies, one reply in four a note): 11 sends, 4 events.
var cycle = []cycleStep{
	{kind: "ask", from: "", to: "open"},
	{kind: "answer", from: "open", to: "answered", replier: true},
	{kind: "answer", from: "answered", to: "answered", replier: true},
	{kind: "note", from: "answered", to: "answered", replier: true},
	{kind: "answer", from: "answered", to: "answered", replier: true},
	{kind: "answer", from: "answered", to: "answered", replier: true},
	{kind: "note", from: "answered", to: "answered", replier: true},
	{kind: "answer", from: "answered", to: "answered", replier: true},
	{kind: "answer", from: "answered", to: "answered", replier: true},
	{kind: "decide", from: "answered", to: "decided"},
	{kind: "close", from: "decided", to: "closed"},
}

// The identities and extensions of a client, as SQL. A colon before a letter would be a
// pgbench variable, hence the realm's colon at the end of a literal of its own.
const (
	sqlAsker       = `('ainotes:' || 'bench-' || :client_id)`
	sqlAskerExt    = `('agent-' || :client_id)`
	sqlReplier     = `('ainotes:' || 'bench-reply-' || :client_id)`
	sqlReplierExt  = `('agent-reply-' || :client_id)`
	sqlInboxMove   = `inbox_tx = pg_current_xact_id()::text::bigint, inbox_seq = nextval('inbox_seq')`
	writeRateLimit = 1_000_000 // the server's PARLEY_LIMIT_WRITES_PER_MINUTE under load
)

// pgbenchScript is the script: one transaction per run, the step :step of the cycle. Its
// variables live per client across transactions (pgbench keeps them): step counts the
// client's sends, tid and root are its current thread and question, setby the message that
// set the thread's awaiting.
func pgbenchScript() string {
	var b strings.Builder
	b.WriteString("-- Parley's sends as pgbench transactions; written by parley-load (cmd/parley-load/pgbench_script.go).\n")
	b.WriteString("-- Run with -M prepared -D step=0 -D tid=0 -D root=0 -D setby=0.\n")
	b.WriteString("\\set n random(1, 999999)\n")
	b.WriteString(fmt.Sprintf("\\set k :step %% %d\n", len(cycle)))
	for i, st := range cycle {
		if i == 0 {
			fmt.Fprintf(&b, "\\if :k = %d\n", i)
		} else {
			fmt.Fprintf(&b, "\\elif :k = %d\n", i)
		}
		b.WriteString(sendSQL(st))
	}
	b.WriteString("\\endif\n\\set step :step + 1\n")
	return b.String()
}

// sendSQL is one step's transaction.
func sendSQL(st cycleStep) string {
	who, ext := sqlAsker, sqlAskerExt
	if st.replier {
		who, ext = sqlReplier, sqlReplierExt
	}
	body := bodySQL(st.kind)
	var b strings.Builder
	line := func(format string, args ...any) { fmt.Fprintf(&b, format+"\n", args...) }
	line("BEGIN;")
	line("SELECT pg_advisory_xact_lock(hashtextextended('parley writes of ' || %s, 0));", who)
	line("WITH gone AS (DELETE FROM write_times WHERE identity = %[1]s AND at <= now() - interval '1 minute' RETURNING 1), "+
		"recent AS (SELECT coalesce((SELECT n FROM write_counts WHERE identity = %[1]s), 0) - (SELECT count(*) FROM gone) AS n), "+
		"added AS (INSERT INTO write_times (identity, at) SELECT %[1]s, now() FROM recent WHERE n < %[2]d) "+
		"SELECT n FROM recent;", who, writeRateLimit)
	if st.kind == "ask" {
		line("INSERT INTO threads (title, state, state_origin, state_confirmed_at, confirmed_state, creator, "+
			"creator_extension, message_count, awaiting_mode, awaiting_identity, awaiting_extension, inbox_tx, "+
			"inbox_seq, created_at, updated_at) VALUES (%s, 'open', 'llm', now(), 'open', %s, %s, 0, '', '', '', 0, 0, now(), now()) "+
			"RETURNING id AS tid \\gset", body, who, ext)
	}
	// The message's awaiting: an ask awaits anyone but its asker, an answer its asker, a note
	// copies the thread's, decide and close end it.
	parent, depth, await := ":root", 1, fmt.Sprintf("'to', %s, %s, NULL", sqlAsker, sqlAskerExt)
	switch st.kind {
	case "ask":
		parent, depth, await = "NULL", 0, fmt.Sprintf("'any', %s, %s, NULL", sqlAsker, sqlAskerExt)
	case "note":
		await = fmt.Sprintf("'to', %s, %s, :setby", sqlAsker, sqlAskerExt)
	case "decide", "close":
		await = "'', '', '', NULL"
	}
	line("INSERT INTO messages (thread_id, parent_id, depth, ask_id, kind, identity, extension, author_kind, body, "+
		"provenance_client, created_at, awaiting_mode, awaiting_identity, awaiting_extension, awaiting_set_by) "+
		"VALUES (:tid, %[1]s, %[2]d, %[1]s, '%[3]s', %[4]s, %[5]s, 'llm', %[6]s, 'parley-load', now(), %[7]s) RETURNING id AS m \\gset",
		parent, depth, st.kind, who, ext, body, await)
	if st.kind == "ask" {
		line("\\set root :m")
	}
	event := st.from != st.to
	if event {
		from, confirmed, confirmedAt := "'"+st.from+"'", "false", "NULL"
		if st.kind == "ask" {
			from, confirmed, confirmedAt = "NULL", "true", "now()" // opening is no marking to confirm
		}
		line("INSERT INTO events (thread_id, subject, act, from_state, to_state, origin, actor_identity, "+
			"actor_extension, label, message_id, confirmed, confirmed_at, at) VALUES (:tid, 'th_' || :tid, '%s', %s, "+
			"'%s', 'llm', %s, %s, %s, :m, %s, %s, now()) RETURNING id AS ev \\gset",
			st.kind, from, st.to, who, ext, who, confirmed, confirmedAt)
	}
	set := []string{"last_message_id = :m", "message_count = message_count + 1", "updated_at = now()"}
	if event && st.kind != "ask" {
		set = append(set, "state = '"+st.to+"'", "state_origin = 'llm'", "state_confirmed_at = NULL", "state_event_id = :ev")
	}
	switch st.kind {
	case "ask":
		set = append(set, "root_message_id = :m", "state_event_id = :ev", "awaiting_mode = 'any'",
			"awaiting_identity = "+sqlAsker, "awaiting_extension = "+sqlAskerExt, "awaiting_set_by = :m",
			"inbox_to = '*'", sqlInboxMove)
	case "answer":
		set = append(set, "awaiting_mode = 'to'", "awaiting_identity = "+sqlAsker,
			"awaiting_extension = "+sqlAskerExt, "awaiting_set_by = :m", "inbox_to = "+sqlAsker, sqlInboxMove)
	case "decide":
		set = append(set, "awaiting_mode = ''", "awaiting_identity = ''", "awaiting_extension = ''",
			"awaiting_set_by = NULL", "inbox_to = NULL", sqlInboxMove)
	}
	line("UPDATE threads SET %s WHERE id = :tid;", strings.Join(set, ", "))
	if st.kind == "ask" || st.kind == "answer" {
		line("\\set setby :m")
	}
	line("COMMIT;")
	return b.String()
}

// bodySQL is the body of a message of kind, numbered :n, as the load's agents write it.
func bodySQL(kind string) string {
	return "(" + sqlString(bodies[kind][0]) + " || :n || " + sqlString(bodies[kind][1]) + ")"
}

func sqlString(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }
