package migrations

import (
	"context"
	"time"

	"github.com/uptrace/bun"

	"github.com/parleyforum/parley/storage"
)

// The core schema of Parley v1: tokens, users, settings, threads, messages, events.
// These models are frozen copies: never edit them, add a migration instead.

type coreToken struct {
	bun.BaseModel `bun:"table:tokens"`

	ID         int64      `bun:"id,pk,autoincrement"`
	Identity   string     `bun:"identity,notnull"`
	Human      bool       `bun:"human,notnull"`
	SecretHash string     `bun:"secret_hash,notnull,unique"`
	Rights     string     `bun:"rights,notnull"`
	Label      *string    `bun:"label"`
	CreatedAt  time.Time  `bun:"created_at,notnull"`
	RevokedAt  *time.Time `bun:"revoked_at"`
}

type coreUser struct {
	bun.BaseModel `bun:"table:users"`

	ID           int64     `bun:"id,pk,autoincrement"`
	Name         string    `bun:"name,notnull,unique"`
	PasswordHash string    `bun:"password_hash,notnull"`
	CreatedAt    time.Time `bun:"created_at,notnull"`
}

type coreSetting struct {
	bun.BaseModel `bun:"table:settings"`

	Key   string `bun:"key,pk"`
	Value string `bun:"value,notnull"`
}

type coreCounter struct {
	bun.BaseModel `bun:"table:counters"`

	Name  string `bun:"name,pk"`
	Value int64  `bun:"value,notnull"`
}

type coreThread struct {
	bun.BaseModel `bun:"table:threads"`

	ID                int64      `bun:"id,pk,autoincrement"`
	Title             string     `bun:"title,notnull"`
	State             string     `bun:"state,notnull"`
	StateOrigin       string     `bun:"state_origin,notnull"`
	StateConfirmedAt  *time.Time `bun:"state_confirmed_at"`
	ConfirmedState    string     `bun:"confirmed_state,notnull"`
	StateEventID      *int64     `bun:"state_event_id"`
	Creator           string     `bun:"creator,notnull"`
	CreatorExtension  string     `bun:"creator_extension,notnull"`
	RootMessageID     *int64     `bun:"root_message_id"`
	LastMessageID     *int64     `bun:"last_message_id"`
	MessageCount      int        `bun:"message_count,notnull"`
	AwaitingMode      string     `bun:"awaiting_mode,notnull"`
	AwaitingIdentity  string     `bun:"awaiting_identity,notnull"`
	AwaitingExtension string     `bun:"awaiting_extension,notnull"`
	AwaitingSetBy     *int64     `bun:"awaiting_set_by"`
	InboxTo           *string    `bun:"inbox_to"`
	InboxTx           int64      `bun:"inbox_tx,notnull"`
	InboxSeq          int64      `bun:"inbox_seq,notnull"`
	CreatedAt         time.Time  `bun:"created_at,notnull"`
	UpdatedAt         time.Time  `bun:"updated_at,notnull"`
}

type coreMessage struct {
	bun.BaseModel `bun:"table:messages"`

	ID                int64     `bun:"id,pk,autoincrement"`
	ThreadID          int64     `bun:"thread_id,notnull"`
	ParentID          *int64    `bun:"parent_id"`
	Depth             int       `bun:"depth,notnull"`
	AskID             *int64    `bun:"ask_id"`
	Kind              string    `bun:"kind,notnull"`
	Identity          string    `bun:"identity,notnull"`
	Extension         string    `bun:"extension,notnull"`
	AuthorKind        string    `bun:"author_kind,notnull"`
	Body              string    `bun:"body,notnull"`
	ProvenanceModel   *string   `bun:"provenance_model"`
	ProvenanceClient  *string   `bun:"provenance_client"`
	CreatedAt         time.Time `bun:"created_at,notnull"`
	AwaitingMode      string    `bun:"awaiting_mode,notnull"`
	AwaitingIdentity  string    `bun:"awaiting_identity,notnull"`
	AwaitingExtension string    `bun:"awaiting_extension,notnull"`
	AwaitingSetBy     *int64    `bun:"awaiting_set_by"`
}

type coreEvent struct {
	bun.BaseModel `bun:"table:events"`

	ID              int64      `bun:"id,pk,autoincrement"`
	ThreadID        int64      `bun:"thread_id,notnull"`
	Subject         string     `bun:"subject,notnull"`
	Act             string     `bun:"act,notnull"`
	FromState       *string    `bun:"from_state"`
	ToState         string     `bun:"to_state,notnull"`
	Origin          string     `bun:"origin,notnull"`
	ActorIdentity   string     `bun:"actor_identity,notnull"`
	ActorExtension  string     `bun:"actor_extension,notnull"`
	Label           string     `bun:"label,notnull"`
	MessageID       *int64     `bun:"message_id"`
	Confirmed       bool       `bun:"confirmed,notnull"`
	ConfirmedAt     *time.Time `bun:"confirmed_at"`
	ConfirmsEventID *int64     `bun:"confirms_event_id"`
	At              time.Time  `bun:"at,notnull"`
}

func init() {
	register(func(ctx context.Context, tx bun.Tx, kind storage.Kind) error {
		tables := []struct {
			model any
			fks   []string
		}{
			{(*coreToken)(nil), nil},
			{(*coreUser)(nil), nil},
			{(*coreSetting)(nil), nil},
			{(*coreCounter)(nil), nil},
			{(*coreThread)(nil), nil},
			{(*coreMessage)(nil), []string{
				"(thread_id) REFERENCES threads (id)",
				"(parent_id) REFERENCES messages (id)",
				"(ask_id) REFERENCES messages (id)",
			}},
			{(*coreEvent)(nil), []string{
				"(thread_id) REFERENCES threads (id)",
				"(message_id) REFERENCES messages (id)",
				"(confirms_event_id) REFERENCES events (id)",
			}},
		}
		for _, t := range tables {
			q := tx.NewCreateTable().Model(t.model)
			for _, fk := range t.fks {
				q = q.ForeignKey(fk)
			}
			if _, err := q.Exec(ctx); err != nil {
				return err
			}
		}
		indexes := []struct {
			model   any
			name    string
			columns []string
			where   string
		}{
			{(*coreToken)(nil), "tokens_identity_idx", []string{"identity"}, ""},
			// The inbox: whose turn (inbox_to), in commit order of the last awaiting change.
			{(*coreThread)(nil), "threads_inbox_idx", []string{"inbox_to", "inbox_tx", "inbox_seq"}, "inbox_to IS NOT NULL"},
			{(*coreThread)(nil), "threads_state_idx", []string{"state", "id"}, ""},
			{(*coreMessage)(nil), "messages_thread_idx", []string{"thread_id", "id"}, ""},
			{(*coreEvent)(nil), "events_thread_idx", []string{"thread_id", "id"}, ""},
		}
		for _, ix := range indexes {
			q := tx.NewCreateIndex().Model(ix.model).Index(ix.name).Column(ix.columns...)
			if ix.where != "" {
				q = q.Where(ix.where)
			}
			if _, err := q.Exec(ctx); err != nil {
				return err
			}
		}
		if kind == storage.Postgres {
			_, err := tx.ExecContext(ctx, "CREATE SEQUENCE inbox_seq")
			return err
		}
		_, err := tx.NewInsert().Model(&coreCounter{Name: "inbox", Value: 0}).Exec(ctx)
		return err
	})
}
