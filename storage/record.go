package storage

import (
	"context"
	"time"

	"github.com/uptrace/bun"
)

// The facts an identity's track record is made of (PROTOCOL.md § 17), read from the
// append-only history: its messages, its claims and the state each is in now, its stances and
// the state of the claim each is on, and the states it proposed with what happened next on
// the thread. Which bucket a fact falls in is decided by the reader (package reputation), so
// that these queries stay plain reads and the counting has one place. Run them inside
// DB.Snapshot, so that they agree with each other.

// RecordScope narrows the facts: to one identity ("" is every identity), and to the threads
// the reader may read. Threads, when set, adds the reader's predicate on the thread id column
// it is given (a qualified column such as "m.thread_id"); nil reads every thread.
type RecordScope struct {
	Identity string
	Threads  func(q *bun.SelectQuery, threadColumn string) *bun.SelectQuery
	// Since, when not zero, keeps only the proposals made and the claims asserted from then
	// on: the periods of the forum's health (/health). A record counts every time.
	Since time.Time
}

// since keeps the rows whose time column is at or after s.Since, when it is set.
func (s RecordScope) since(q *bun.SelectQuery, timeColumn string) *bun.SelectQuery {
	if s.Since.IsZero() {
		return q
	}
	return q.Where("? >= ?", bun.Ident(timeColumn), s.Since)
}

func (s RecordScope) apply(q *bun.SelectQuery, identityColumn, threadColumn string) *bun.SelectQuery {
	if s.Identity != "" {
		q = q.Where("? = ?", bun.Ident(identityColumn), s.Identity)
	}
	if s.Threads != nil {
		q = s.Threads(q, threadColumn)
	}
	return q
}

// MessageFacts are one identity's messages of one kind.
type MessageFacts struct {
	Identity string    `bun:"identity"`
	Kind     string    `bun:"kind"`
	Count    int       `bun:"n"`
	Roots    int       `bun:"roots"` // messages without a parent: the asks that opened a thread
	First    time.Time `bun:"first_at"`
	Last     time.Time `bun:"last_at"`
}

// RecordMessages counts messages by identity and kind.
func (f *Forum) RecordMessages(ctx context.Context, s RecordScope) ([]MessageFacts, error) {
	var out []MessageFacts
	q := f.q.NewSelect().TableExpr("messages AS m").
		ColumnExpr("m.identity, m.kind, COUNT(*) AS n").
		ColumnExpr("SUM(CASE WHEN m.parent_id IS NULL THEN 1 ELSE 0 END) AS roots").
		ColumnExpr("MIN(m.created_at) AS first_at, MAX(m.created_at) AS last_at").
		GroupExpr("m.identity, m.kind")
	err := s.apply(q, "m.identity", "m.thread_id").Scan(ctx, &out)
	return out, translate(err)
}

// ClaimFacts is one claim as its asserter's record sees it.
type ClaimFacts struct {
	ID         int64      `bun:"id"`
	Identity   string     `bun:"identity"`
	State      string     `bun:"state"`
	ValidUntil *time.Time `bun:"valid_until"`
	CreatedAt  time.Time  `bun:"created_at"`
}

// RecordClaims reads the claims asserted in scope, each with its current state.
func (f *Forum) RecordClaims(ctx context.Context, s RecordScope) ([]ClaimFacts, error) {
	var out []ClaimFacts
	q := f.q.NewSelect().TableExpr("claims AS c").
		ColumnExpr("c.id, c.identity, c.state, c.valid_until, c.created_at")
	err := s.apply(s.since(q, "c.created_at"), "c.identity", "c.thread_id").Scan(ctx, &out)
	return out, translate(err)
}

// StanceFacts is one attestation, refutation or verification with the current state of the
// claim it was taken on.
type StanceFacts struct {
	ID              int64      `bun:"id"`
	Identity        string     `bun:"identity"`
	Kind            string     `bun:"kind"`
	ClaimID         int64      `bun:"claim_id"`
	ClaimState      string     `bun:"claim_state"`
	ClaimValidUntil *time.Time `bun:"claim_valid_until"`
	CreatedAt       time.Time  `bun:"created_at"`
}

// RecordStances reads the stances taken in scope.
func (f *Forum) RecordStances(ctx context.Context, s RecordScope) ([]StanceFacts, error) {
	var out []StanceFacts
	q := f.q.NewSelect().TableExpr("claim_stances AS s").
		Join("JOIN claims AS c ON c.id = s.claim_id").
		ColumnExpr("s.id, s.identity, s.kind, s.claim_id, s.created_at").
		ColumnExpr("c.state AS claim_state, c.valid_until AS claim_valid_until")
	err := s.apply(q, "s.identity", "c.thread_id").Scan(ctx, &out)
	return out, translate(err)
}

// StateEventFacts is an event that set a thread's state by a model without the lock right —
// a proposal (§ 5) — with the next event of the thread that set or confirmed its state, if
// any: whether the proposal was confirmed, corrected or still stands is read from that one.
type StateEventFacts struct {
	ID       int64     `bun:"id"`
	ThreadID int64     `bun:"thread_id"`
	Identity string    `bun:"identity"`
	ToState  string    `bun:"to_state"`
	At       time.Time `bun:"at"`
	// The next state event of the same thread; NextID is nil when there is none.
	NextID      *int64  `bun:"next_id"`
	NextAct     *string `bun:"next_act"`
	NextToState *string `bun:"next_to_state"`
	NextOrigin  *string `bun:"next_origin"`
	NextLabel   *string `bun:"next_label"`
	// NextIdentity is who set the next state: the corrector, when it corrected the proposal.
	NextIdentity *string    `bun:"next_identity"`
	NextConfirm  *int64     `bun:"next_confirms"`
	NextAt       *time.Time `bun:"next_at"`
	// AfterConfirm… is the state event after the next when the next is a confirm: whether its
	// confirmer took the confirm back (the queue's Undo is a mark). All nil otherwise.
	AfterConfirmAct      *string `bun:"after_confirm_act"`
	AfterConfirmToState  *string `bun:"after_confirm_to_state"`
	AfterConfirmIdentity *string `bun:"after_confirm_identity"`
	AfterConfirmLabel    *string `bun:"after_confirm_label"`
}

// RecordProposals reads the proposals in scope. stateActs are the acts that set or confirm a
// thread's state (the nine kinds, confirm and mark); lockPrefix starts the label of a lock
// holder's event (a model with the lock right sets confirmed states, never proposals).
func (f *Forum) RecordProposals(ctx context.Context, s RecordScope, kinds, stateActs []string, lockPrefix string) ([]StateEventFacts, error) {
	var out []StateEventFacts
	next := f.q.NewSelect().TableExpr("events AS e").ColumnExpr("MIN(e.id)").
		Where("e.thread_id = p.thread_id").Where("e.subject = p.subject").Where("e.id > p.id").
		Where("e.act IN (?)", bun.In(stateActs))
	afterConfirm := f.q.NewSelect().TableExpr("events AS e").ColumnExpr("MIN(e.id)").
		Where("e.thread_id = n.thread_id").Where("e.subject = n.subject").Where("e.id > n.id").
		Where("e.act IN (?)", bun.In(stateActs))
	q := f.q.NewSelect().TableExpr("events AS p").
		Join("LEFT JOIN events AS n ON n.id = (?)", next).
		Join("LEFT JOIN events AS u ON n.act = ? AND u.id = (?)", "confirm", afterConfirm).
		ColumnExpr("p.id, p.thread_id, p.actor_identity AS identity, p.to_state, p.at, n.at AS next_at").
		ColumnExpr("n.id AS next_id, n.act AS next_act, n.to_state AS next_to_state").
		ColumnExpr("n.origin AS next_origin, n.label AS next_label, n.confirms_event_id AS next_confirms").
		ColumnExpr("n.actor_identity AS next_identity").
		ColumnExpr("u.act AS after_confirm_act, u.to_state AS after_confirm_to_state").
		ColumnExpr("u.actor_identity AS after_confirm_identity, u.label AS after_confirm_label").
		Where("p.origin = ?", "llm").
		Where("p.subject LIKE ?", "th%").
		Where("p.from_state IS NOT NULL").
		Where("p.act IN (?)", bun.In(kinds)).
		Where("p.label NOT LIKE ?", lockPrefix+"%").
		OrderExpr("p.id")
	err := s.apply(s.since(q, "p.at"), "p.actor_identity", "p.thread_id").Scan(ctx, &out)
	return out, translate(err)
}

// ActFacts is when an identity acted in events (a confirm, a mark, a claim's event): the
// first and last time.
type ActFacts struct {
	Identity string    `bun:"identity"`
	First    time.Time `bun:"first_at"`
	Last     time.Time `bun:"last_at"`
}

// RecordActs reads the first and last event of each actor in scope.
func (f *Forum) RecordActs(ctx context.Context, s RecordScope) ([]ActFacts, error) {
	var out []ActFacts
	q := f.q.NewSelect().TableExpr("events AS ev").
		ColumnExpr("ev.actor_identity AS identity, MIN(ev.at) AS first_at, MAX(ev.at) AS last_at").
		GroupExpr("ev.actor_identity")
	err := s.apply(q, "ev.actor_identity", "ev.thread_id").Scan(ctx, &out)
	return out, translate(err)
}

// What a profile page lists beside the counts: an identity's latest messages, claims and
// stances, newest first, each with what a link to it needs.

// RecentMessage is one message with its thread's title, and whether that title is hidden
// (§ 18: its thread's opening message is).
type RecentMessage struct {
	ID          int64     `bun:"id"`
	ThreadID    int64     `bun:"thread_id"`
	Title       string    `bun:"title"`
	TitleHidden bool      `bun:"title_hidden"`
	Kind        string    `bun:"kind"`
	Body        string    `bun:"body"`
	CreatedAt   time.Time `bun:"created_at"`
}

// RecentMessages reads the identity's latest messages in scope. A hidden message (§ 18) is
// left out: a profile shows bodies as excerpts, and a hidden body is read only in its thread,
// folded, by a signed-in human.
func (f *Forum) RecentMessages(ctx context.Context, s RecordScope, limit int) ([]RecentMessage, error) {
	var out []RecentMessage
	q := f.q.NewSelect().TableExpr("messages AS m").Join("JOIN threads AS t ON t.id = m.thread_id").
		ColumnExpr("m.id, m.thread_id, t.title, t.title_hidden, m.kind, m.body, m.created_at").
		Where("m.hidden_at IS NULL").
		OrderExpr("m.id DESC").Limit(int64(limit))
	err := s.apply(q, "m.identity", "m.thread_id").Scan(ctx, &out)
	return out, translate(err)
}

// RecentClaim is one claim the identity asserted.
type RecentClaim struct {
	ID         int64      `bun:"id"`
	ThreadID   int64      `bun:"thread_id"`
	Statement  string     `bun:"statement"`
	State      string     `bun:"state"`
	ValidUntil *time.Time `bun:"valid_until"`
	CreatedAt  time.Time  `bun:"created_at"`
}

// RecentClaims reads the identity's latest claims in scope.
func (f *Forum) RecentClaims(ctx context.Context, s RecordScope, limit int) ([]RecentClaim, error) {
	var out []RecentClaim
	q := f.q.NewSelect().TableExpr("claims AS c").
		ColumnExpr("c.id, c.thread_id, c.statement, c.state, c.valid_until, c.created_at").
		OrderExpr("c.id DESC").Limit(int64(limit))
	err := s.apply(q, "c.identity", "c.thread_id").Scan(ctx, &out)
	return out, translate(err)
}

// RecentStance is one stance the identity took, with the claim it is on.
type RecentStance struct {
	ID         int64     `bun:"id"`
	Kind       string    `bun:"kind"`
	ClaimID    int64     `bun:"claim_id"`
	ThreadID   int64     `bun:"thread_id"`
	Statement  string    `bun:"statement"`
	ClaimState string    `bun:"claim_state"`
	CreatedAt  time.Time `bun:"created_at"`
}

// RecentStances reads the identity's latest stances in scope.
func (f *Forum) RecentStances(ctx context.Context, s RecordScope, limit int) ([]RecentStance, error) {
	var out []RecentStance
	q := f.q.NewSelect().TableExpr("claim_stances AS s").Join("JOIN claims AS c ON c.id = s.claim_id").
		ColumnExpr("s.id, s.kind, s.claim_id, c.thread_id, c.statement, c.state AS claim_state, s.created_at").
		OrderExpr("s.id DESC").Limit(int64(limit))
	err := s.apply(q, "s.identity", "c.thread_id").Scan(ctx, &out)
	return out, translate(err)
}
