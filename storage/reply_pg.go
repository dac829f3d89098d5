package storage

import (
	"context"
	"database/sql"
	"reflect"
	"strconv"
	"strings"
	"time"
)

// The hot path of a send on Postgres: the token lookup of every request, the two reads before
// the checks and the writes of a reply after them. Unlike the rest of storage these are SQL with numbered parameters run on
// the transaction's *sql.Tx with pgx.QueryExecModeCacheStatement (DB.preparedMode), not bun
// queries: bun writes every value into the SQL text, so Postgres parses and plans each
// statement afresh, while these few, always the same text, are prepared once per connection
// and then only bound and run. Every other query keeps bun and the simple protocol (see
// openPostgres).

// prepared reports whether the hot path's prepared statements apply: on Postgres, inside
// DB.Write.
func (f *Forum) prepared() bool { return f.db.kind == Postgres && f.tx != nil }

var (
	pgTokenByHash     = "SELECT " + columnList((*Token)(nil)) + " FROM tokens WHERE secret_hash = $1"
	pgThreadForUpdate = "SELECT " + columnList((*Thread)(nil)) + " FROM threads WHERE id = $1 FOR UPDATE"
	pgMessage         = "SELECT " + columnList((*Message)(nil)) + " FROM messages WHERE id = $1"
)

// pgParentAndThread is the parent and its thread in one statement, locking only the
// thread's row. A writer that waited for the lock gets the thread as the other left it; the
// parent, a message, never changes.
var pgParentAndThread = "SELECT " + prefixedColumnList("p", (*Message)(nil)) + ", " +
	prefixedColumnList("t", (*Thread)(nil)) +
	" FROM messages AS p JOIN threads AS t ON t.id = COALESCE($2, p.thread_id) WHERE p.id = $1 FOR UPDATE OF t"

// The same reads for a counted write also take the writer's write lock ($3, $2 for the
// thread alone; see CountWrite), after the thread's: the locking read is a materialized WITH,
// which hands on its row only once it is locked, and the advisory lock is taken for that
// row. The order matters: every writer that holds a thread's lock and wants a write lock
// takes them in this order, so two writers never wait for each other. "_locked" is a column
// the scan discards (its name begins with an underscore).
var (
	pgParentAndThreadForWrite = "WITH pt AS MATERIALIZED (" + pgParentAndThread +
		") SELECT pt.*, pg_advisory_xact_lock($3)::text AS _locked FROM pt"
	pgThreadForWrite = "WITH t AS MATERIALIZED (" + pgThreadForUpdate +
		") SELECT t.*, pg_advisory_xact_lock($2)::text AS _locked FROM t"
)

// parentAndThread is a row of pgParentAndThread.
type parentAndThread struct {
	Parent Message `bun:"embed:p_"`
	Thread Thread  `bun:"embed:t_"`
}

func (f *Forum) parentAndThreadPostgres(ctx context.Context, parentID, threadID int64, writer string) (*Message, *Thread, error) {
	var thread *int64
	if threadID != 0 {
		thread = &threadID
	}
	row := new(parentAndThread)
	var rows *sql.Rows
	var err error
	if writer == "" {
		rows, err = f.tx.QueryContext(ctx, pgParentAndThread, f.db.preparedMode, parentID, thread)
	} else {
		rows, err = f.tx.QueryContext(ctx, pgParentAndThreadForWrite, f.db.preparedMode, parentID, thread, writeLockKey(writer))
	}
	if err != nil {
		return nil, nil, translate(err)
	}
	if err := f.db.scanOne(ctx, rows, row); err != nil {
		return nil, nil, err
	}
	if writer != "" {
		f.writeLocked = writer
	}
	return &row.Parent, &row.Thread, nil
}

// columnNames are the columns of a model, as bun's Model(…) selects them.
func columnNames(model any) []string {
	fields := reflect.TypeOf(model).Elem()
	var names []string
	for i := 0; i < fields.NumField(); i++ {
		tag := fields.Field(i).Tag.Get("bun")
		if name, _, _ := strings.Cut(tag, ","); name != "" && name != "-" && !strings.HasPrefix(tag, "table:") {
			names = append(names, name)
		}
	}
	return names
}

// columnList is every column of a model.
func columnList(model any) string { return strings.Join(columnNames(model), ", ") }

// prefixedColumnList is every column of a model in the table named alias, as alias_column.
func prefixedColumnList(alias string, model any) string {
	names := columnNames(model)
	for i, n := range names {
		names[i] = alias + "." + n + " AS " + alias + "_" + n
	}
	return strings.Join(names, ", ")
}

// selectPrepared reads the one row of query (a lookup by id) into dest, a model, in the
// write's transaction.
func (f *Forum) selectPrepared(ctx context.Context, query string, dest any, id int64) error {
	return f.db.selectPrepared(ctx, f.tx, query, dest, id)
}

// selectPrepared reads the one row of query, a lookup by a unique key (and the query's
// further parameters, if any), into dest, a model: ErrNotFound when there is none.
func (db *DB) selectPrepared(ctx context.Context, q interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}, query string, dest any, args ...any) error {
	rows, err := q.QueryContext(ctx, query, append([]any{db.preparedMode}, args...)...)
	if err != nil {
		return translate(err)
	}
	return db.scanOne(ctx, rows, dest)
}

// scanOne scans the one row of rows into dest and closes rows: ErrNotFound when there is none.
func (db *DB) scanOne(ctx context.Context, rows *sql.Rows, dest any) error {
	defer rows.Close()
	if !rows.Next() {
		if err := rows.Err(); err != nil {
			return translate(err)
		}
		return ErrNotFound
	}
	if err := db.ScanRow(ctx, rows, dest); err != nil {
		return translate(err)
	}
	return translate(rows.Close())
}

// writeMessagePostgres is WriteMessage as one statement: the message insert, the event insert
// and the thread update as data-modifying WITHs of one UPDATE, one round trip instead of
// three (two without an event). The update sees the ids the inserts return through the
// WITHs' RETURNING; foreign keys are checked at the end of the statement, when both rows
// exist.
func (f *Forum) writeMessagePostgres(ctx context.Context, w MessageWrite) error {
	m, e, t, c := w.Message, w.Event, w.Thread, w.Count
	if c != nil && f.writeLocked != c.Identity {
		// No statement of this transaction has taken the identity's lock yet: the count
		// below must see every write committed before it.
		if err := f.lockWrites(ctx, c.Identity); err != nil {
			return err
		}
	}
	// Room for the longest variant (counted, an event, neither opening nor awaited by
	// itself), so that appending never copies.
	args := make([]any, 0, 49)
	args = append(args, f.db.preparedMode)
	if c != nil {
		args = append(args, c.Identity, c.Now.Add(-time.Minute), c.Now, c.Limit, c.Token)
	}
	args = append(args,
		m.ThreadID, m.ParentID, m.Depth, m.AskID, m.Kind, m.Identity, m.Extension, m.AuthorKind,
		m.Body, m.ProvenanceModel, m.ProvenanceClient, m.CreatedAt,
		m.AwaitingMode, m.AwaitingIdentity, m.AwaitingExtension, m.AwaitingSetBy,
		t.Title, t.State, t.StateOrigin, t.StateConfirmedAt, t.ConfirmedState, t.MessageCount,
		t.AwaitingMode, t.AwaitingIdentity, t.AwaitingExtension, t.InboxTo, t.UpdatedAt, t.ID,
	)
	if !w.Opens {
		args = append(args, t.RootMessageID)
	}
	if !w.AwaitedBySelf {
		args = append(args, t.AwaitingSetBy)
	}
	if e == nil {
		args = append(args, t.StateEventID)
	} else {
		args = append(args, e.ThreadID, e.Subject, e.Act, e.FromState, e.ToState, e.Origin,
			e.ActorIdentity, e.ActorExtension, e.Label, e.Confirmed, e.ConfirmedAt,
			e.ConfirmsEventID, e.At)
	}
	v := statementVariant{event: e != nil, opens: w.Opens, self: w.AwaitedBySelf, move: w.MoveInbox, count: c != nil}
	row := f.tx.QueryRowContext(ctx, messageStatements[v], args...)
	var messageID, eventID, inboxTx, inboxSeq sql.NullInt64
	var recent int
	var oldest sql.NullTime
	var live bool
	var err error
	if c == nil {
		err = row.Scan(&messageID, &eventID, &inboxTx, &inboxSeq)
	} else {
		err = row.Scan(&messageID, &eventID, &inboxTx, &inboxSeq, &recent, &oldest, &live)
	}
	switch {
	case err != nil:
		return translate(err) // no row (uncounted): the thread is gone (ErrNotFound)
	case messageID.Valid:
	case c == nil:
		return ErrNotFound
	case !live:
		return revokedSince(c.Token)
	case recent >= c.Limit:
		return &WriteLimited{Free: oldest.Time.Add(time.Minute)}
	default:
		return ErrNotFound // counted, under the limit, and nothing written: the thread is gone
	}
	m.ID = messageID.Int64
	w.linkMessage()
	if e != nil {
		e.ID = eventID.Int64
		t.StateEventID = &e.ID
	}
	if w.MoveInbox {
		t.InboxTx, t.InboxSeq = inboxTx.Int64, inboxSeq.Int64
	}
	return nil
}

// statementVariant picks one of the variants of the message's statement.
type statementVariant struct{ event, opens, self, move, count bool }

// messageStatements are the variants, built once.
var messageStatements = map[statementVariant]string{}

func init() {
	for i := 0; i < 32; i++ {
		v := statementVariant{event: i&1 != 0, opens: i&2 != 0, self: i&4 != 0, move: i&8 != 0, count: i&16 != 0}
		messageStatements[v] = buildMessageStatement(v)
	}
}

// buildMessageStatement writes one variant; its parameters are, in order, when it counts the
// write the identity, the start of its minute, the write's time, the limit and the token to
// check (see pgCountWrite), then the message's columns, the thread's, the thread's id, its
// root_message_id unless the message opens it, its awaiting_set_by unless the message sets
// it, and then either the thread's state_event_id (no event) or the event's columns.
//
// A counted variant writes only when fewer than the limit of the identity's writes fall
// within the minute (the message's insert selects from the count, and everything else
// follows the message) and while its token is live, and answers one row in any case: the
// ids, NULL when nothing was written, the count with its oldest write, and whether the token
// is live.
func buildMessageStatement(v statementVariant) string {
	n := 0
	next := func() string { n++; return "$" + strconv.Itoa(n) }
	params := func(k int) string {
		p := make([]string, k)
		for i := range p {
			p[i] = next()
		}
		return strings.Join(p, ", ")
	}
	var b strings.Builder
	b.WriteString("WITH ")
	written := "" // the condition of the message's insert: none, or the count's
	var countIdentity, countSince, countLimit string
	if v.count {
		identity, since, now, limit, token := next(), next(), next(), next(), next()
		countIdentity, countSince, countLimit = identity, since, limit
		b.WriteString(`gone AS (DELETE FROM write_times WHERE identity = ` + identity + ` AND at <= ` + since + ` RETURNING 1),
	c AS (SELECT ` + pgRecentWrites(identity) + ` AS n,
		(` + token + `::bigint = 0 OR EXISTS (SELECT 1 FROM tokens WHERE id = ` + token + ` AND revoked_at IS NULL)) AS live),
	added AS (INSERT INTO write_times (identity, at) SELECT ` + identity + `, ` + now + ` FROM c WHERE n < ` + limit + ` AND live),
	`)
		written = " FROM c WHERE n < " + limit + " AND live"
	}
	b.WriteString(`m AS (INSERT INTO messages (thread_id, parent_id, depth, ask_id, kind, identity,
	extension, author_kind, body, provenance_model, provenance_client, created_at,
	awaiting_mode, awaiting_identity, awaiting_extension, awaiting_set_by)
	`)
	if v.count {
		b.WriteString("SELECT " + params(16) + written)
	} else {
		b.WriteString("VALUES (" + params(16) + ")")
	}
	b.WriteString(" RETURNING id)")
	set := []string{"title", "state", "state_origin", "state_confirmed_at", "confirmed_state",
		"message_count", "awaiting_mode", "awaiting_identity",
		"awaiting_extension", "inbox_to", "updated_at"}
	var sets []string
	for _, col := range set {
		sets = append(sets, col+" = "+next())
	}
	where := next()
	sets = append(sets, "last_message_id = m.id")
	if v.opens {
		sets = append(sets, "root_message_id = m.id")
	} else {
		sets = append(sets, "root_message_id = "+next())
	}
	if v.self {
		sets = append(sets, "awaiting_set_by = m.id")
	} else {
		sets = append(sets, "awaiting_set_by = "+next())
	}
	from, eventID := "m", "0"
	if v.event {
		// From m: no message, no event.
		b.WriteString(`, e AS (INSERT INTO events (thread_id, subject, act, from_state, to_state,
	origin, actor_identity, actor_extension, label, confirmed, confirmed_at, confirms_event_id,
	at, message_id) SELECT ` + params(13) + `, m.id FROM m RETURNING id)`)
		sets = append(sets, "state_event_id = e.id")
		from, eventID = "m, e", "e.id"
	} else {
		sets = append(sets, "state_event_id = "+next())
	}
	if v.move {
		// As in UpdateThread: the position is taken inside the update (see horizonSQL).
		sets = append(sets, "inbox_tx = pg_current_xact_id()::text::bigint", "inbox_seq = nextval('inbox_seq')")
	}
	update := "UPDATE threads SET " + strings.Join(sets, ", ") + " FROM " + from +
		" WHERE threads.id = " + where +
		" RETURNING m.id AS message_id, " + eventID + " AS event_id, threads.inbox_tx, threads.inbox_seq"
	if v.count {
		b.WriteString(",\nu AS (" + update + ")\nSELECT u.message_id, u.event_id, u.inbox_tx, u.inbox_seq, c.n, " +
			pgOldestWrite(countIdentity, countSince, "c.n", countLimit) + ", c.live FROM c LEFT JOIN u ON true")
	} else {
		b.WriteString("\n" + update)
	}
	return b.String()
}
