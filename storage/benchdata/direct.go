package benchdata

import (
	"context"
	"database/sql"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/parleyforum/parley/storage"
)

// Direct is the baseline that Send is measured against: for each message it issues the inserts
// and updates that Send issues — the writes_per_minute record of its identity, the message,
// the thread with its inbox position, the event when the state changes — in one transaction, straight through database/sql and the driver
// (pgx or the pure-Go SQLite), with bound parameters and the driver's statement cache. It
// does none of what Send does besides: no token lookup, no reads of the parent or the thread,
// no checks, no ORM. What Send needs to know, the caller keeps in memory (DirectThread).
type Direct struct {
	db   *sql.DB
	kind storage.Kind
	q    directQueries
	// writer makes the SQLite baseline's writers take turns in the process, as Parley's do
	// (storage.DB.Tx), rather than in SQLite's busy handler, whose sleeps let the others
	// overtake a waiting writer again and again (a send waited 7 s in one load run).
	writer sync.Mutex
}

// OpenDirect connects the baseline to the database at rawURL, which must hold Parley's schema
// (see migrations). On Postgres it has a pool of its own with the driver's defaults — pgx with
// its cache of prepared statements, as a program that used the driver directly would — of
// the size of Parley's. On SQLite it opens the database as Parley does (WAL, BEGIN
// IMMEDIATE, the busy timeout), since without that concurrent writers fail. Close it after.
func OpenDirect(ctx context.Context, rawURL string) (*Direct, error) {
	if !strings.HasPrefix(rawURL, "postgres://") && !strings.HasPrefix(rawURL, "postgresql://") {
		db, err := storage.Open(ctx, rawURL)
		if err != nil {
			return nil, err
		}
		return &Direct{db: db.DB.DB, kind: db.Kind(), q: directQueriesFor(db.Kind())}, nil
	}
	cfg, err := pgx.ParseConfig(rawURL)
	if err != nil {
		return nil, fmt.Errorf("benchdata: %s: %v", storage.Redact(rawURL), err)
	}
	db := stdlib.OpenDB(*cfg)
	db.SetMaxOpenConns(32)
	db.SetMaxIdleConns(32)
	if err := db.PingContext(ctx); err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("benchdata: cannot reach %s: %v", storage.Redact(rawURL), err)
	}
	return &Direct{db: db, kind: storage.Postgres, q: directQueriesFor(storage.Postgres)}, nil
}

// Close closes the baseline's connections.
func (d *Direct) Close() error { return d.db.Close() }

// DirectThread is what the baseline remembers of a thread it opened.
type DirectThread struct {
	ID      int64
	Root    int64
	Creator string
	Title   string
}

// Ask opens a thread: the thread, its ask, the event "open", then the thread's root, awaiting
// and inbox position — the four statements of Send's ask.
func (d *Direct) Ask(ctx context.Context, identity, body string) (DirectThread, error) {
	th := DirectThread{Creator: identity, Title: body}
	err := d.tx(ctx, identity, func(tx *sql.Tx, now time.Time) error {
		if err := tx.QueryRowContext(ctx, d.q.insertThread, body, now, identity, now, now).Scan(&th.ID); err != nil {
			return err
		}
		msg, err := d.insertMessage(ctx, tx, now, th.ID, nil, "ask", identity, body, "any", identity, nil)
		if err != nil {
			return err
		}
		th.Root = msg
		ev, err := d.insertEvent(ctx, tx, now, th.ID, "ask", nil, "open", identity, msg, true)
		if err != nil {
			return err
		}
		return d.update(ctx, tx, d.q.opened, th.ID, true, ev, msg, msg, identity, msg, now)
	})
	return th, err
}

// Reply writes one message of kind answer, note, decide or close under the thread's ask, as
// Send writes it: an answer awaits the asker and moves the thread in the inbox; a note changes
// nothing but the thread's count; decide and close end the awaiting. from and to name the
// state change the message makes (an event is written); equal, they mean none.
func (d *Direct) Reply(ctx context.Context, th DirectThread, kind, identity, body, from, to string) error {
	return d.tx(ctx, identity, func(tx *sql.Tx, now time.Time) error {
		var msg int64
		var err error
		switch kind {
		case "answer":
			msg, err = d.insertMessage(ctx, tx, now, th.ID, &th.Root, kind, identity, body, "to", th.Creator, nil)
		case "note":
			// A note copies the awaiting of the thread: the answer's, or the ask's.
			msg, err = d.insertMessage(ctx, tx, now, th.ID, &th.Root, kind, identity, body, "to", th.Creator, &th.Root)
		case "decide", "close":
			msg, err = d.insertMessage(ctx, tx, now, th.ID, &th.Root, kind, identity, body, "", "", nil)
		default:
			return fmt.Errorf("benchdata: the baseline does not write %q", kind)
		}
		if err != nil {
			return err
		}
		var ev int64
		if from != to {
			if ev, err = d.insertEvent(ctx, tx, now, th.ID, kind, &from, to, identity, msg, false); err != nil {
				return err
			}
		}
		if kind == "note" {
			return d.update(ctx, tx, d.q.noted, th.ID, false, msg, now)
		}
		switch {
		case kind == "answer" && from == to:
			return d.update(ctx, tx, d.q.answered, th.ID, true, msg, th.Creator, msg, th.Creator, now)
		case kind == "answer":
			return d.update(ctx, tx, d.q.answeredState, th.ID, true, msg, th.Creator, msg, th.Creator, now, to, ev)
		case from == to:
			return d.update(ctx, tx, d.q.settled, th.ID, true, msg, now)
		default:
			return d.update(ctx, tx, d.q.settledState, th.ID, true, msg, now, to, ev)
		}
	})
}

// tx runs fn in one transaction after the count of identity's write, as Send counts it.
func (d *Direct) tx(ctx context.Context, identity string, fn func(tx *sql.Tx, now time.Time) error) error {
	if d.kind == storage.SQLite {
		d.writer.Lock()
		defer d.writer.Unlock()
	}
	tx, err := d.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	now := storage.Now()
	err = d.countWrite(ctx, tx, identity, now)
	if err == nil {
		err = fn(tx, now)
	}
	if err != nil {
		_ = tx.Rollback()
		return err
	}
	return tx.Commit()
}

// countWrite records the write of identity at now against writes_per_minute, as Send's
// count does (storage/write_rate.go): on Postgres under the identity's advisory lock, in one
// statement; on SQLite, whose one writer already takes turns, in two. The limit is the load
// tool's, which nothing reaches; a write over it is an error.
func (d *Direct) countWrite(ctx context.Context, tx *sql.Tx, identity string, now time.Time) error {
	since := now.Add(-time.Minute)
	if d.kind == storage.Postgres {
		if _, err := tx.ExecContext(ctx, d.q.lockWrites, "parley writes of "+identity); err != nil {
			return err
		}
	} else if _, err := tx.ExecContext(ctx, d.q.deleteOldWrites, identity, since); err != nil {
		return err
	}
	res, err := tx.ExecContext(ctx, d.q.countWrite, identity, since, now, directWriteLimit)
	if err != nil {
		return err
	}
	if n, err := res.RowsAffected(); err == nil && n != 1 {
		return fmt.Errorf("benchdata: %s has written %d times within a minute", identity, directWriteLimit)
	}
	return nil
}

// directWriteLimit is the writes_per_minute the baseline counts against: the load tool's.
const directWriteLimit = 1_000_000

// update runs one UPDATE of the thread: args, then (moving it in the inbox) the new
// position's sequence number where the dialect binds one, then the thread's id.
func (d *Direct) update(ctx context.Context, tx *sql.Tx, query string, thread int64, move bool, args ...any) error {
	if move && d.kind != storage.Postgres {
		var seq int64
		err := tx.QueryRowContext(ctx, "UPDATE counters SET value = value + 1 WHERE name = 'inbox' RETURNING value").Scan(&seq)
		if err != nil {
			return err
		}
		args = append(args, seq)
	}
	res, err := tx.ExecContext(ctx, query, append(args, thread)...)
	if err != nil {
		return err
	}
	if n, err := res.RowsAffected(); err == nil && n != 1 {
		return fmt.Errorf("benchdata: the baseline's update touched %d threads, not 1", n)
	}
	return nil
}

func (d *Direct) insertMessage(ctx context.Context, tx *sql.Tx, now time.Time, thread int64, parent *int64,
	kind, identity, body, awaitMode, awaitIdentity string, awaitSetBy *int64) (int64, error) {
	depth := 0
	if parent != nil {
		depth = 1
	}
	var id int64
	err := tx.QueryRowContext(ctx, d.q.insertMessage, thread, parent, depth, parent, kind, identity,
		body, now, awaitMode, awaitIdentity, awaitSetBy).Scan(&id)
	return id, err
}

func (d *Direct) insertEvent(ctx context.Context, tx *sql.Tx, now time.Time, thread int64, act string,
	from *string, to, identity string, msg int64, confirmed bool) (int64, error) {
	var confirmedAt *time.Time
	if confirmed {
		confirmedAt = &now
	}
	var id int64
	err := tx.QueryRowContext(ctx, d.q.insertEvent, thread, "th_"+strconv.FormatInt(thread, 10), act,
		from, to, identity, identity, msg, confirmed, confirmedAt, now).Scan(&id)
	return id, err
}

type directQueries struct {
	lockWrites, deleteOldWrites, countWrite                       string
	insertThread, insertMessage, insertEvent                      string
	opened, answered, answeredState, noted, settled, settledState string
	readThread, readMessages, readClaims, readStances             string // see ReadThread
}

func directQueriesFor(kind storage.Kind) directQueries {
	// The inbox position of Send's UpdateThread: on Postgres taken inside the update, on
	// SQLite the counter's new value, bound.
	position := "inbox_tx = 0, inbox_seq = ?"
	if kind == storage.Postgres {
		position = "inbox_tx = pg_current_xact_id()::text::bigint, inbox_seq = nextval('inbox_seq')"
	}
	// The count of the write: the identity's row of write_counts, kept by triggers on
	// write_times, counts its records once those older than a minute are gone — on Postgres
	// deleted in the same statement, whose read of write_counts still counts them.
	q := directQueries{
		lockWrites:      "SELECT pg_advisory_xact_lock(hashtextextended(?, 0))",
		deleteOldWrites: "DELETE FROM write_times WHERE identity = ? AND at <= ?",
		countWrite: `INSERT INTO write_times (identity, at) SELECT ?1, ?3
			WHERE coalesce((SELECT n FROM write_counts WHERE identity = ?1), 0) < ?4`,
		insertThread: `INSERT INTO threads (title, state, state_origin, state_confirmed_at, confirmed_state,
			creator, creator_extension, message_count, awaiting_mode, awaiting_identity, awaiting_extension,
			inbox_tx, inbox_seq, created_at, updated_at)
			VALUES (?, 'open', 'llm', ?, 'open', ?, '', 0, '', '', '', 0, 0, ?, ?) RETURNING id`,
		insertMessage: `INSERT INTO messages (thread_id, parent_id, depth, ask_id, kind, identity, extension,
			author_kind, body, created_at, awaiting_mode, awaiting_identity, awaiting_extension, awaiting_set_by)
			VALUES (?, ?, ?, ?, ?, ?, '', 'llm', ?, ?, ?, ?, '', ?) RETURNING id`,
		insertEvent: `INSERT INTO events (thread_id, subject, act, from_state, to_state, origin,
			actor_identity, actor_extension, label, message_id, confirmed, confirmed_at, at)
			VALUES (?, ?, ?, ?, ?, 'llm', ?, '', ?, ?, ?, ?, ?) RETURNING id`,
		opened: `UPDATE threads SET state_event_id = ?, root_message_id = ?, last_message_id = ?,
			message_count = 1, awaiting_mode = 'any', awaiting_identity = ?, awaiting_set_by = ?,
			inbox_to = '*', updated_at = ?, ` + position + ` WHERE id = ?`,
		answered: `UPDATE threads SET last_message_id = ?, message_count = message_count + 1,
			awaiting_mode = 'to', awaiting_identity = ?, awaiting_extension = '', awaiting_set_by = ?,
			inbox_to = ?, updated_at = ?, ` + position + ` WHERE id = ?`,
		answeredState: `UPDATE threads SET last_message_id = ?, message_count = message_count + 1,
			awaiting_mode = 'to', awaiting_identity = ?, awaiting_extension = '', awaiting_set_by = ?,
			inbox_to = ?, updated_at = ?,
			state = ?, state_origin = 'llm', state_confirmed_at = NULL, state_event_id = ?, ` + position + ` WHERE id = ?`,
		noted: `UPDATE threads SET last_message_id = ?, message_count = message_count + 1, updated_at = ?
			WHERE id = ?`,
		settled: `UPDATE threads SET last_message_id = ?, message_count = message_count + 1,
			awaiting_mode = '', awaiting_identity = '', awaiting_extension = '', awaiting_set_by = NULL,
			inbox_to = NULL, updated_at = ?, ` + position + ` WHERE id = ?`,
		settledState: `UPDATE threads SET last_message_id = ?, message_count = message_count + 1,
			awaiting_mode = '', awaiting_identity = '', awaiting_extension = '', awaiting_set_by = NULL,
			inbox_to = NULL, updated_at = ?,
			state = ?, state_origin = 'llm', state_confirmed_at = NULL, state_event_id = ?, ` + position + ` WHERE id = ?`,
	}
	q.readThread, q.readMessages, q.readClaims, q.readStances = readQueries(kind)
	if kind == storage.Postgres {
		q.countWrite = `WITH gone AS (DELETE FROM write_times WHERE identity = $1 AND at <= $2 RETURNING 1)
			INSERT INTO write_times (identity, at) SELECT $1, $3
			WHERE coalesce((SELECT n FROM write_counts WHERE identity = $1), 0) - (SELECT count(*) FROM gone) < $4`
		for _, s := range []*string{&q.lockWrites, &q.insertThread, &q.insertMessage, &q.insertEvent, &q.opened,
			&q.answered, &q.answeredState, &q.noted, &q.settled, &q.settledState,
			&q.readThread, &q.readMessages, &q.readClaims, &q.readStances} {
			*s = numbered(*s)
		}
	}
	return q
}

// numbered turns ? placeholders into Postgres's $1, $2, …
func numbered(query string) string {
	var b strings.Builder
	n := 0
	for _, r := range query {
		if r == '?' {
			n++
			b.WriteString("$" + strconv.Itoa(n))
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}
