package storage

import (
	"context"
	"database/sql"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/uptrace/bun"
)

// Forum holds the queries on threads, messages and events. Inside DB.Write every query of one
// operation shares one transaction; DB.Read gives the same queries outside one.
type Forum struct {
	db *DB
	q  bun.IDB
	tx *sql.Tx // inside DB.Write: the transaction under q, for the prepared hot path (reply_pg.go)
	// writeLocked is the identity whose write lock (see CountWrite) this transaction has
	// taken on Postgres, riding on a statement of the send's hot path; "" when none.
	writeLocked string
	// scope is who may see what (rooms.go): every read of a thread, a message or a claim
	// and every list through this Forum keeps to it. The zero value holds everything.
	scope Scope
	// asOf, when set, is the point of the record the reads of claims, stances and messages
	// answer as of (asof.go).
	asOf *asOf
}

// In makes every query of f keep to the scope s (PROTOCOL.md § 16): a thread, message or
// claim outside it is ErrNotFound, exactly as one that does not exist, and the lists, the
// inbox, search and the feed hold only what is inside it. It returns f.
func (f *Forum) In(s Scope) *Forum {
	f.scope = s
	return f
}

// inScope answers ErrNotFound when the thread id is outside f's scope; it costs nothing for
// a Forum that holds everything.
func (f *Forum) inScope(ctx context.Context, id int64) error {
	if f.scope.Everything() {
		return nil
	}
	ok, err := f.ThreadInScope(ctx, id, f.scope)
	if err != nil {
		return err
	}
	if !ok {
		return ErrNotFound
	}
	return nil
}

// Write runs fn in one read-write transaction. After a commit it wakes this instance's feed
// waiters (the commit may have added to the feed); other instances hear of it through the
// database (see Changes).
func (db *DB) Write(ctx context.Context, fn func(ctx context.Context, f *Forum) error) error {
	err := db.Tx(ctx, func(ctx context.Context, tx bun.Tx) error {
		return fn(ctx, &Forum{db: db, q: tx, tx: tx.Tx})
	})
	if err == nil {
		db.changes.PublishFeed()
	}
	return err
}

// Read gives the queries outside a transaction, for reads that need one statement each.
func (db *DB) Read() *Forum { return &Forum{db: db, q: db.DB} }

// Now is the database-independent clock of stored times: UTC, microseconds (what both
// databases keep).
func Now() time.Time { return time.Now().UTC().Truncate(time.Microsecond) }

// ThreadForUpdate reads a thread and, on Postgres, locks its row until the transaction ends,
// so that writers of one thread take turns.
func (f *Forum) ThreadForUpdate(ctx context.Context, id int64) (*Thread, error) {
	t := new(Thread)
	var err error
	switch {
	case f.prepared():
		err = f.selectPrepared(ctx, pgThreadForUpdate, t, id)
	case f.sqliteHot():
		err = f.selectSQLite(ctx, f.db.sqliteModelOf(t).byID, t, id)
	default:
		err = translate(f.db.lockForUpdate(f.q.NewSelect().Model(t).Where("id = ?", id)).Scan(ctx))
	}
	if err == nil {
		// Checked under the row's lock: no move can take the thread out of the scope
		// before this transaction ends.
		err = f.lockedInScope(ctx, t)
	}
	return t, err
}

// lockedInScope answers ErrNotFound when the thread t, read under its row's lock, is outside
// f's scope. Its room is in the row: a token scoped to that very room needs no query (the
// send's usual case); a room inside a token's room asks the rooms table.
func (f *Forum) lockedInScope(ctx context.Context, t *Thread) error {
	ok, err := f.scope.holdsRoom(ctx, f.q, t.RoomID)
	if err != nil {
		return err
	}
	if !ok {
		return ErrNotFound
	}
	return nil
}

// ThreadForWrite is ThreadForUpdate for a write by writer that will be counted
// (MessageWrite.Count): on Postgres the same statement takes the writer's write lock after
// the thread's, so that the count needs no statement of its own. An empty writer takes no
// write lock.
func (f *Forum) ThreadForWrite(ctx context.Context, id int64, writer string) (*Thread, error) {
	if !f.prepared() || writer == "" {
		return f.ThreadForUpdate(ctx, id)
	}
	t := new(Thread)
	if err := f.db.selectPrepared(ctx, f.tx, pgThreadForWrite, t, id, writeLockKey(writer)); err != nil {
		return t, err
	}
	f.writeLocked = writer
	return t, f.lockedInScope(ctx, t)
}

// ParentAndThreadForUpdate reads a message and its thread (threadID, or the message's own
// when threadID is 0) and locks the thread as ThreadForUpdate does, and, for a non-empty
// writer, takes the writer's write lock as ThreadForWrite does. A missing message is
// ErrNotFound with both nil; a missing thread is ErrNotFound with the message. On Postgres it
// is one statement (reply_pg.go).
func (f *Forum) ParentAndThreadForUpdate(ctx context.Context, parentID, threadID int64, writer string) (*Message, *Thread, error) {
	if !f.scope.Everything() && f.prepared() {
		// The one statement, then the scope on the rows it read: outside the scope the
		// parent and the thread do not exist, the parent first, as below.
		p, t, err := f.parentAndThreadPostgres(ctx, parentID, threadID, writer)
		if err != nil && !errors.Is(err, ErrNotFound) {
			return p, t, err
		}
		if err == nil {
			// The parent's thread first; usually it is the locked thread itself.
			if p.ThreadID != t.ID {
				if err := f.inScope(ctx, p.ThreadID); err != nil {
					return nil, nil, err
				}
			}
			if err := f.lockedInScope(ctx, t); err != nil {
				if p.ThreadID == t.ID {
					return nil, nil, err // the parent's own thread: the parent does not exist
				}
				return p, nil, err
			}
			return p, t, nil
		}
		// One of the two is missing: the statements below tell which.
	}
	if !f.scope.Everything() {
		// Outside the scope, the parent and the thread do not exist: the parent first, as
		// above. The parent's thread is checked on the row read under its lock when it is
		// the thread written to (the usual case: no query of its own), else apart, first.
		p, err := f.messageInAnyRoom(ctx, parentID)
		if err != nil {
			return nil, nil, err
		}
		if threadID == 0 {
			threadID = p.ThreadID
		}
		if p.ThreadID != threadID {
			if err := f.inScope(ctx, p.ThreadID); err != nil {
				return nil, nil, err
			}
		}
		t, err := f.ThreadForWrite(ctx, threadID, writer)
		if err != nil {
			if p.ThreadID == threadID && errors.Is(err, ErrNotFound) {
				return nil, nil, err // the parent's own thread is outside: the parent does not exist
			}
			return p, nil, err
		}
		return p, t, nil
	}
	if f.prepared() {
		if p, t, err := f.parentAndThreadPostgres(ctx, parentID, threadID, writer); err == nil || !errors.Is(err, ErrNotFound) {
			return p, t, err
		}
		// One of the two is missing: the statements below tell which.
	}
	p, err := f.Message(ctx, parentID)
	if err != nil {
		return nil, nil, err
	}
	if threadID == 0 {
		threadID = p.ThreadID
	}
	t, err := f.ThreadForWrite(ctx, threadID, writer)
	if err != nil {
		return p, nil, err
	}
	return p, t, nil
}

// Thread reads one thread.
func (f *Forum) Thread(ctx context.Context, id int64) (*Thread, error) {
	return f.ThreadScoped(ctx, id, f.scope)
}

// Message reads one message; outside f's scope it is ErrNotFound.
func (f *Forum) Message(ctx context.Context, id int64) (*Message, error) {
	m, err := f.messageInAnyRoom(ctx, id)
	if err == nil {
		err = f.inScope(ctx, m.ThreadID)
	}
	return m, err
}

// messageInAnyRoom reads one message whatever f's scope: for a caller that checks the scope
// itself on a row it reads anyway.
func (f *Forum) messageInAnyRoom(ctx context.Context, id int64) (*Message, error) {
	m := new(Message)
	var err error
	switch {
	case f.prepared():
		err = f.selectPrepared(ctx, pgMessage, m, id)
	case f.sqliteHot():
		err = f.selectSQLite(ctx, f.db.sqliteModelOf(m).byID, m, id)
	default:
		err = translate(f.q.NewSelect().Model(m).Where("id = ?", id).Scan(ctx))
	}
	return m, err
}

// SetMessageHidden writes whether m is hidden, and by whom, why, whether the reason is
// public and since when (PROTOCOL.md § 18): those columns as m has them; nothing else of the
// message changes.
func (f *Forum) SetMessageHidden(ctx context.Context, m *Message) error {
	_, err := f.q.NewUpdate().Model(m).Column("hidden_at", "hidden_by", "hidden_reason", "hidden_reason_public").WherePK().Exec(ctx)
	return translate(err)
}

// SetThreadTitleHidden writes whether t's title is hidden, as t has it (PROTOCOL.md § 18);
// nothing else of the thread changes, not even its last activity.
func (f *Forum) SetThreadTitleHidden(ctx context.Context, t *Thread) error {
	_, err := f.q.NewUpdate().Model(t).Column("title_hidden").WherePK().Exec(ctx)
	return translate(err)
}

// MessagesByID reads the given messages, in no particular order.
func (f *Forum) MessagesByID(ctx context.Context, ids []int64) ([]Message, error) {
	var out []Message
	if len(ids) == 0 {
		return out, nil
	}
	err := f.q.NewSelect().Model(&out).Where("id IN (?)", bun.In(ids)).Scan(ctx)
	return out, translate(err)
}

// Messages reads a thread's messages in order of creation (as of f's point, AsOf, those it
// held).
func (f *Forum) Messages(ctx context.Context, threadID int64) ([]Message, error) {
	var out []Message
	q := f.q.NewSelect().Model(&out).Where("thread_id = ?", threadID).Order("id")
	if f.asOf != nil {
		var err error
		if q, err = f.messagesAsOf(ctx, q, "id"); err != nil {
			return nil, err
		}
	}
	err := q.Scan(ctx)
	return out, translate(err)
}

// InsertThread stores a new thread and sets its ID.
func (f *Forum) InsertThread(ctx context.Context, t *Thread) error {
	if t.RoomID == 0 {
		t.RoomID = GeneralRoom
	}
	if f.sqliteHot() {
		if done, err := f.insertSQLite(ctx, t, &t.ID); done {
			return err
		}
	}
	_, err := f.q.NewInsert().Model(t).Returning("id").Exec(ctx)
	return translate(err)
}

// OpenThread is InsertThread for a thread whose first message writer will write, counted
// (MessageWrite.Count): on Postgres the insert also takes the writer's write lock, as
// ThreadForWrite does. An empty writer takes no write lock.
func (f *Forum) OpenThread(ctx context.Context, t *Thread, writer string) error {
	if t.RoomID == 0 {
		t.RoomID = GeneralRoom
	}
	if !f.prepared() || writer == "" {
		return f.InsertThread(ctx, t)
	}
	// The lock is taken in RETURNING, after the row is inserted; "_locked" is a column bun
	// discards (its name begins with an underscore).
	_, err := f.q.NewInsert().Model(t).
		Returning("id, pg_advisory_xact_lock(?)::text AS _locked", writeLockKey(writer)).Exec(ctx)
	if err != nil {
		return translate(err)
	}
	f.writeLocked = writer
	return nil
}

// InsertMessage stores a new message and sets its ID.
func (f *Forum) InsertMessage(ctx context.Context, m *Message) error {
	if f.sqliteHot() {
		if done, err := f.insertSQLite(ctx, m, &m.ID); done {
			return err
		}
	}
	_, err := f.q.NewInsert().Model(m).Returning("id").Exec(ctx)
	return translate(err)
}

// InsertEvent appends an event and sets its ID.
func (f *Forum) InsertEvent(ctx context.Context, e *Event) error {
	if f.sqliteHot() {
		if done, err := f.insertSQLite(ctx, e, &e.ID); done {
			return err
		}
	}
	_, err := f.q.NewInsert().Model(e).Returning("id").Exec(ctx)
	return translate(err)
}

// ConfirmEvent records that the state an event set has been confirmed.
func (f *Forum) ConfirmEvent(ctx context.Context, id int64, at time.Time) error {
	_, err := f.q.NewUpdate().Model((*Event)(nil)).
		Set("confirmed = ?", true).Set("confirmed_at = ?", at).
		Where("id = ?", id).Exec(ctx)
	return translate(err)
}

// threadColumns are the columns an update of a thread writes; the inbox position has its own.
var threadColumns = []string{
	"title", "state", "state_origin", "state_confirmed_at", "confirmed_state", "state_event_id",
	"root_message_id", "last_message_id", "message_count",
	"awaiting_mode", "awaiting_identity", "awaiting_extension", "awaiting_set_by",
	"inbox_to", "updated_at", "room_id",
}

// UpdateThread writes a thread's changed state. With moveInbox it also gives the thread a new
// inbox position, so that inbox readers holding an older cursor see it again.
func (f *Forum) UpdateThread(ctx context.Context, t *Thread, moveInbox bool) error {
	if f.sqliteHot() {
		if done, err := f.updateThreadSQLite(ctx, t, moveInbox); done {
			return err
		}
	}
	q := f.q.NewUpdate().Model(t).Column(threadColumns...).WherePK()
	if moveInbox {
		if f.db.kind == Postgres {
			// Taken inside the UPDATE itself: one round trip, and the position belongs to
			// the very transaction that commits the change (see horizonExpr).
			q = q.Set("inbox_tx = pg_current_xact_id()::text::bigint").
				Set("inbox_seq = nextval('inbox_seq')").
				Returning("inbox_tx, inbox_seq")
		} else {
			pos, err := f.db.nextInboxPosition(ctx, f.q)
			if err != nil {
				return err
			}
			t.InboxTx, t.InboxSeq = pos.Tx, pos.Seq
			q = q.Column("inbox_tx", "inbox_seq")
		}
	}
	res, err := q.Exec(ctx)
	if err != nil {
		return translate(err)
	}
	if n, err := res.RowsAffected(); err == nil && n == 0 {
		return ErrNotFound
	}
	return nil
}

// MessageWrite is what a new message writes: the message, the event when the thread's state
// or its confirmation changes, and the thread as it is after both.
type MessageWrite struct {
	Message *Message
	Event   *Event // nil when the message changes no state
	Thread  *Thread
	// Opens: the message is the thread's first, so the thread's RootMessageID becomes its id.
	Opens bool
	// AwaitedBySelf: the message sets the awaiting itself, so the thread's AwaitingSetBy
	// becomes its id.
	AwaitedBySelf bool
	// MoveInbox gives the thread a new inbox position (see UpdateThread).
	MoveInbox bool
	// Count, when set, counts the write against its identity's limit as CountWrite does, in
	// the same transaction, and writes nothing but returns *WriteLimited when the limit is
	// reached, or ErrRevoked when Count.Token has been revoked. On Postgres the count rides on
	// the write's one statement.
	Count *WriteCount
}

// WriteMessage stores a message into a thread that exists: it inserts the message and the
// event, sets their IDs, points the event at the message and the thread at both
// (LastMessageID, StateEventID with an event, RootMessageID with Opens, AwaitingSetBy with
// AwaitedBySelf), and writes the thread as UpdateThread does. On Postgres it is one statement
// (reply_pg.go); elsewhere the statements of InsertMessage, InsertEvent and UpdateThread.
func (f *Forum) WriteMessage(ctx context.Context, w MessageWrite) error {
	if f.prepared() {
		return f.writeMessagePostgres(ctx, w)
	}
	if c := w.Count; c != nil {
		free, ok, err := f.CountWrite(ctx, c.Identity, c.Token, c.Now, c.Limit)
		if err != nil {
			return err
		}
		if !ok {
			return &WriteLimited{Free: free}
		}
	}
	if err := f.InsertMessage(ctx, w.Message); err != nil {
		return err
	}
	w.linkMessage()
	if w.Event != nil {
		if err := f.InsertEvent(ctx, w.Event); err != nil {
			return err
		}
		w.Thread.StateEventID = &w.Event.ID
	}
	return f.UpdateThread(ctx, w.Thread, w.MoveInbox)
}

// linkMessage points the event and the thread at the message, which has its ID.
func (w *MessageWrite) linkMessage() {
	id := w.Message.ID
	w.Thread.LastMessageID = &id
	if w.Opens {
		w.Thread.RootMessageID = &id
	}
	if w.AwaitedBySelf {
		w.Thread.AwaitingSetBy = &id
	}
	if w.Event != nil {
		w.Event.MessageID = &id
	}
}

// ThreadsPage lists threads newest first, optionally of one state, below the id beforeID
// (0: from the newest).
func (f *Forum) ThreadsPage(ctx context.Context, state string, beforeID int64, limit int) ([]Thread, error) {
	return f.threadsByRoom(ctx, limit, []string{"id DESC"}, func(q *bun.SelectQuery) *bun.SelectQuery {
		if state != "" {
			q = q.Where("state = ?", state)
		}
		if beforeID > 0 {
			q = q.Where("id < ?", beforeID)
		}
		return q
	})
}

// threadsByRoom reads a page of threads within f's scope in the order given (columns of
// threads): where applies the page's own conditions. Within a scope the page is read one
// room at a time, each room's first in the order through its index on (room_id, …) and cut
// at the limit, and the rooms' pieces merged: it costs what the page holds. One condition on
// the room instead lets the database walk every thread in the order and drop those of other
// rooms — the whole forum for a small, quiet room.
func (f *Forum) threadsByRoom(ctx context.Context, limit int, order []string, where func(*bun.SelectQuery) *bun.SelectQuery) ([]Thread, error) {
	scope, err := f.resolvedScope(ctx)
	if err != nil {
		return nil, err
	}
	var out []Thread
	if scope.Everything() {
		err := where(f.q.NewSelect().Model(&out)).Order(order...).Limit(int64(limit)).Scan(ctx)
		return out, translate(err)
	}
	if len(scope.Rooms) == 0 {
		return out, nil
	}
	// SQLite takes no parentheses around the parts of a UNION: each is a subquery of its own.
	parts := make([]string, len(scope.Rooms))
	args := make([]any, len(scope.Rooms))
	for i, room := range scope.Rooms {
		parts[i] = "SELECT * FROM (?) AS r" + strconv.Itoa(i)
		args[i] = where(f.q.NewSelect().Model((*Thread)(nil)).Where("room_id = ?", room)).Order(order...).Limit(int64(limit))
	}
	merged := make([]string, len(order))
	for i, o := range order {
		merged[i] = "thread." + o
	}
	err = f.q.NewSelect().Model(&out).
		ModelTableExpr("("+strings.Join(parts, " UNION ALL ")+") AS thread", args...).
		ColumnExpr("thread.*").OrderExpr(strings.Join(merged, ", ")).Limit(int64(limit)).Scan(ctx)
	return out, translate(err)
}

// Events reads a thread's events after the event id afterID, oldest first.
func (f *Forum) Events(ctx context.Context, threadID, afterID int64, limit int) ([]Event, error) {
	var out []Event
	err := f.q.NewSelect().Model(&out).
		Where("thread_id = ?", threadID).Where("id > ?", afterID).
		Order("id").Limit(int64(limit)).Scan(ctx)
	return out, translate(err)
}
