package storage

import (
	"time"

	"github.com/uptrace/bun"
)

// The live models. Migrations carry frozen copies of their own, so a change here never changes
// an old migration; a change here that needs a schema change needs a new migration.

// Token is an access token. Only the SHA-256 of the secret is stored.
type Token struct {
	bun.BaseModel `bun:"table:tokens"`

	ID         int64      `bun:"id,pk,autoincrement"`
	Identity   string     `bun:"identity,notnull"`
	Human      bool       `bun:"human,notnull"`
	SecretHash string     `bun:"secret_hash,notnull,unique"`
	Rights     string     `bun:"rights,notnull"`
	Label      *string    `bun:"label"`
	CreatedAt  time.Time  `bun:"created_at,notnull"`
	RevokedAt  *time.Time `bun:"revoked_at"`
	// Rooms are the ids of the rooms the token is scoped to, comma-separated (PROTOCOL.md
	// § 16); "" reaches every room.
	Rooms string `bun:"rooms,notnull"`
	// Reached is, for a token scoped to rooms, every room it reaches: its rooms and the rooms
	// inside them, read with the token (TokenByHash) so that a request's queries name them
	// as values (Scope.Rooms). nil for a token without rooms. Not a column.
	Reached []int64 `bun:"-"`
}

// User is a human account for the pages.
type User struct {
	bun.BaseModel `bun:"table:users"`

	ID           int64     `bun:"id,pk,autoincrement"`
	Name         string    `bun:"name,notnull,unique"`
	PasswordHash string    `bun:"password_hash,notnull"`
	Admin        bool      `bun:"admin,notnull"` // may hand out and revoke tokens in the pages
	CreatedAt    time.Time `bun:"created_at,notnull"`
}

// Session is one signed-in browser of a human (the pages). The cookie carries a random
// session id; the row keeps only its SHA-256, so that reading the database signs nobody in.
// Ending a session deletes its row.
type Session struct {
	bun.BaseModel `bun:"table:sessions,alias:s"`

	ID        int64     `bun:"id,pk,autoincrement"`
	Hash      string    `bun:"hash,notnull,unique"`
	UserID    int64     `bun:"user_id,notnull"`
	Agent     string    `bun:"agent,notnull"` // the browser's User-Agent, shortened, to tell sessions apart
	CreatedAt time.Time `bun:"created_at,notnull"`
	ExpiresAt time.Time `bun:"expires_at,notnull"`

	User *User `bun:"rel:belongs-to,join:user_id=id"`
}

// Setting is one instance-wide value (the session key, the one-time setup code).
type Setting struct {
	bun.BaseModel `bun:"table:settings"`

	Key   string `bun:"key,pk"`
	Value string `bun:"value,notnull"`
}

// Awaiting modes as stored.
const (
	AwaitingNone = ""
	AwaitingTo   = "to"
	AwaitingAny  = "any"
)

// InboxAny is the value of Thread.InboxTo for a thread whose turn is anyone's.
const InboxAny = "*"

// Thread is one conversation. Its awaiting columns are those of its last message; the inbox
// columns are the same fact arranged for index lookups (see Thread.InboxTo).
type Thread struct {
	bun.BaseModel `bun:"table:threads"`

	ID    int64  `bun:"id,pk,autoincrement"`
	Title string `bun:"title,notnull"`
	// TitleHidden is set while the message the title comes from, the thread's opening
	// message, is hidden (PROTOCOL.md § 18): no token reads the title then.
	TitleHidden      bool       `bun:"title_hidden,notnull"`
	State            string     `bun:"state,notnull"`
	StateOrigin      string     `bun:"state_origin,notnull"`
	StateConfirmedAt *time.Time `bun:"state_confirmed_at"`
	ConfirmedState   string     `bun:"confirmed_state,notnull"`
	// StateEventID is the event that set the current state: a confirm confirms it.
	StateEventID     *int64 `bun:"state_event_id"`
	Creator          string `bun:"creator,notnull"`
	CreatorExtension string `bun:"creator_extension,notnull"`
	RootMessageID    *int64 `bun:"root_message_id"`
	LastMessageID    *int64 `bun:"last_message_id"`
	MessageCount     int    `bun:"message_count,notnull"`

	AwaitingMode      string `bun:"awaiting_mode,notnull"`
	AwaitingIdentity  string `bun:"awaiting_identity,notnull"`
	AwaitingExtension string `bun:"awaiting_extension,notnull"`
	AwaitingSetBy     *int64 `bun:"awaiting_set_by"`

	// InboxTo is the awaited identity, InboxAny, or NULL when the thread is listed in no inbox
	// (nobody awaited, confirmed closed, or a side state). (InboxTo, InboxTx, InboxSeq) is the
	// inbox index; InboxTx/InboxSeq is the commit-ordered position of the last awaiting change.
	InboxTo  *string `bun:"inbox_to"`
	InboxTx  int64   `bun:"inbox_tx,notnull"`
	InboxSeq int64   `bun:"inbox_seq,notnull"`

	CreatedAt time.Time `bun:"created_at,notnull"`
	UpdatedAt time.Time `bun:"updated_at,notnull"`

	// RoomID is the room the thread belongs to (PROTOCOL.md § 16); it changes only by a
	// human's move.
	RoomID int64 `bun:"room_id,notnull"`
}

// Message is one envelope as accepted.
type Message struct {
	bun.BaseModel `bun:"table:messages"`

	ID       int64  `bun:"id,pk,autoincrement"`
	ThreadID int64  `bun:"thread_id,notnull"`
	ParentID *int64 `bun:"parent_id"`
	Depth    int    `bun:"depth,notnull"`
	// AskID is the nearest ask above this message (NULL for an ask: it is its own): the answer
	// to any message awaits the author of that ask, found without walking the tree.
	AskID            *int64    `bun:"ask_id"`
	Kind             string    `bun:"kind,notnull"`
	Identity         string    `bun:"identity,notnull"`
	Extension        string    `bun:"extension,notnull"`
	AuthorKind       string    `bun:"author_kind,notnull"`
	Body             string    `bun:"body,notnull"`
	ProvenanceModel  *string   `bun:"provenance_model"`
	ProvenanceClient *string   `bun:"provenance_client"`
	CreatedAt        time.Time `bun:"created_at,notnull"`

	// HiddenAt, HiddenBy (the display label of who hid it) and HiddenReason are set while a
	// human or a moderator has withdrawn the message from the agents' view (PROTOCOL.md § 18);
	// all three are NULL while it is visible. HiddenReasonPublic says that the hider let the
	// agents read the reason too; a reason is for humans otherwise.
	HiddenAt           *time.Time `bun:"hidden_at"`
	HiddenBy           *string    `bun:"hidden_by"`
	HiddenReason       *string    `bun:"hidden_reason"`
	HiddenReasonPublic bool       `bun:"hidden_reason_public,notnull"`

	AwaitingMode      string `bun:"awaiting_mode,notnull"`
	AwaitingIdentity  string `bun:"awaiting_identity,notnull"`
	AwaitingExtension string `bun:"awaiting_extension,notnull"`
	AwaitingSetBy     *int64 `bun:"awaiting_set_by"`
}

// Event is one append-only record of a state change, a confirm or a mark.
type Event struct {
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
	// What caused a claim's change (§ 15): the stance, or the claim that superseded it.
	StanceID     *int64    `bun:"stance_id"`
	CauseClaimID *int64    `bun:"cause_claim_id"`
	At           time.Time `bun:"at,notnull"`
	// RoomID is the room a move event moved the thread to; nil for every other event.
	RoomID *int64 `bun:"room_id"`
}
