package benchdata

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/parleyforum/parley/storage"
)

// DirectThreadRead is what ReadThread reads of a thread, as the baseline scans it.
type DirectThreadRead struct {
	Thread   directThreadRow
	Messages []directMessageRow
	Claims   []directClaimRow
	Stances  int // rows of stances on the claims
}

// ReadThread is the baseline that read_thread is measured against: the same rows — the
// thread, its messages in order of creation, its claims and their stances — read with one
// query each, straight through database/sql and the driver, every column scanned into a typed
// value. It builds no tree and no views, and checks nothing.
func (d *Direct) ReadThread(ctx context.Context, id int64) (*DirectThreadRead, error) {
	r := &DirectThreadRead{}
	t := &r.Thread
	err := d.db.QueryRowContext(ctx, d.q.readThread, id).Scan(&t.ID, &t.Title, &t.State, &t.StateOrigin,
		&t.StateConfirmedAt, &t.ConfirmedState, &t.StateEventID, &t.Creator, &t.CreatorExtension,
		&t.RootMessageID, &t.LastMessageID, &t.MessageCount, &t.AwaitingMode, &t.AwaitingIdentity,
		&t.AwaitingExtension, &t.AwaitingSetBy, &t.InboxTo, &t.InboxTx, &t.InboxSeq, &t.CreatedAt, &t.UpdatedAt)
	if err != nil {
		return nil, fmt.Errorf("benchdata: thread %d: %w", id, err)
	}
	if err := scanAll(ctx, d.db, d.q.readMessages, id, func(rows *sql.Rows) error {
		r.Messages = append(r.Messages, directMessageRow{})
		m := &r.Messages[len(r.Messages)-1]
		return rows.Scan(&m.ID, &m.ThreadID, &m.ParentID, &m.Depth, &m.AskID, &m.Kind, &m.Identity,
			&m.Extension, &m.AuthorKind, &m.Body, &m.ProvenanceModel, &m.ProvenanceClient, &m.CreatedAt,
			&m.AwaitingMode, &m.AwaitingIdentity, &m.AwaitingExtension, &m.AwaitingSetBy)
	}); err != nil {
		return nil, fmt.Errorf("benchdata: messages of thread %d: %w", id, err)
	}
	if err := scanAll(ctx, d.db, d.q.readClaims, id, func(rows *sql.Rows) error {
		r.Claims = append(r.Claims, directClaimRow{})
		c := &r.Claims[len(r.Claims)-1]
		return rows.Scan(&c.ID, &c.ThreadID, &c.AnchorID, &c.Statement, &c.Identity, &c.Extension,
			&c.AuthorKind, &c.State, &c.StateOrigin, &c.StateConfirmedAt, &c.Evidence, &c.ValidUntil,
			&c.SupersededBy, &c.ProvenanceModel, &c.ProvenanceClient, &c.CreatedAt, &c.UpdatedAt)
	}); err != nil {
		return nil, fmt.Errorf("benchdata: claims of thread %d: %w", id, err)
	}
	if len(r.Claims) == 0 {
		return r, nil // as the storage does: no claims, no query of their stances
	}
	// The stances of the thread's claims, every column, each signed one with its key.
	err = scanAll(ctx, d.db, d.q.readStances, id, func(rows *sql.Rows) error {
		cols, err := rows.Columns()
		if err != nil {
			return err
		}
		values := make([]any, len(cols))
		for i := range values {
			values[i] = new(any)
		}
		r.Stances++
		return rows.Scan(values...)
	})
	if err != nil {
		return nil, fmt.Errorf("benchdata: stances of thread %d: %w", id, err)
	}
	return r, nil
}

func scanAll(ctx context.Context, db *sql.DB, query string, id int64, scan func(*sql.Rows) error) error {
	rows, err := db.QueryContext(ctx, query, id)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		if err := scan(rows); err != nil {
			return err
		}
	}
	return rows.Err()
}

type directThreadRow struct {
	ID                                                int64
	Title, State, StateOrigin                         string
	StateConfirmedAt                                  *time.Time
	ConfirmedState                                    string
	StateEventID                                      *int64
	Creator, CreatorExtension                         string
	RootMessageID, LastMessageID                      *int64
	MessageCount                                      int
	AwaitingMode, AwaitingIdentity, AwaitingExtension string
	AwaitingSetBy                                     *int64
	InboxTo                                           *string
	InboxTx, InboxSeq                                 int64
	CreatedAt, UpdatedAt                              time.Time
}

type directMessageRow struct {
	ID, ThreadID                                      int64
	ParentID                                          *int64
	Depth                                             int
	AskID                                             *int64
	Kind, Identity, Extension, AuthorKind, Body       string
	ProvenanceModel, ProvenanceClient                 *string
	CreatedAt                                         time.Time
	AwaitingMode, AwaitingIdentity, AwaitingExtension string
	AwaitingSetBy                                     *int64
}

type directClaimRow struct {
	ID, ThreadID, AnchorID                                         int64
	Statement, Identity, Extension, AuthorKind, State, StateOrigin string
	StateConfirmedAt                                               *time.Time
	Evidence                                                       string
	ValidUntil                                                     *time.Time
	SupersededBy                                                   *int64
	ProvenanceModel, ProvenanceClient                              *string
	CreatedAt, UpdatedAt                                           time.Time
}

// readQueries are the baseline's reads of a thread, with ? placeholders.
func readQueries(kind storage.Kind) (thread, messages, claims, stances string) {
	thread = `SELECT id, title, state, state_origin, state_confirmed_at, confirmed_state, state_event_id,
		creator, creator_extension, root_message_id, last_message_id, message_count,
		awaiting_mode, awaiting_identity, awaiting_extension, awaiting_set_by,
		inbox_to, inbox_tx, inbox_seq, created_at, updated_at
		FROM threads WHERE id = ?`
	messages = `SELECT id, thread_id, parent_id, depth, ask_id, kind, identity, extension, author_kind,
		body, provenance_model, provenance_client, created_at,
		awaiting_mode, awaiting_identity, awaiting_extension, awaiting_set_by
		FROM messages WHERE thread_id = ? ORDER BY id`
	claims = `SELECT id, thread_id, anchor_id, statement, identity, extension, author_kind, state,
		state_origin, state_confirmed_at, evidence, valid_until, superseded_by,
		provenance_model, provenance_client, created_at, updated_at
		FROM claims WHERE thread_id = ? ORDER BY id`
	stances = `SELECT stance.*, signing_key.public_key FROM claim_stances AS stance
		LEFT JOIN signing_keys AS signing_key ON signing_key.id = stance.signature_key_id
		WHERE stance.claim_id IN (SELECT id FROM claims WHERE thread_id = ?) ORDER BY stance.id`
	return thread, messages, claims, stances
}
