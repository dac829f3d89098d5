package storage

import (
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/uptrace/bun"
)

// The facts of the forum's health (the page /health) beside the record's: the seals that a
// refutation overturned, and the threads waiting longest. Like the record's queries they are
// plain reads, narrowed by a RecordScope (its Identity is not used), to run inside
// DB.Snapshot together with RecordProposals and RecordClaims.

// OverturnedSeal is a claim that was verified and then refuted: the event that refuted it.
type OverturnedSeal struct {
	EventID   int64     `bun:"id"`
	ThreadID  int64     `bun:"thread_id"`
	Subject   string    `bun:"subject"` // cl_<n>
	Identity  string    `bun:"actor_identity"`
	Label     string    `bun:"label"`
	At        time.Time `bun:"at"`
	ClaimID   int64     `bun:"-"`
	Statement string    `bun:"-"`
}

// SealsOverturned counts the claims' events from verified to refuted in scope (from
// s.Since on) and reads the latest limit of them, newest first, each with its claim's
// statement.
func (f *Forum) SealsOverturned(ctx context.Context, s RecordScope, limit int) (int, []OverturnedSeal, error) {
	base := func() *bun.SelectQuery {
		q := f.q.NewSelect().TableExpr("events AS e").
			Where("e.subject LIKE ?", "cl%").
			Where("e.from_state = ?", "verified").Where("e.to_state = ?", "refuted")
		q = s.since(q, "e.at")
		if s.Threads != nil {
			q = s.Threads(q, "e.thread_id")
		}
		return q
	}
	n, err := base().Count(ctx)
	if err != nil {
		return 0, nil, translate(err)
	}
	var out []OverturnedSeal
	err = base().ColumnExpr("e.id, e.thread_id, e.subject, e.actor_identity, e.label, e.at").
		OrderExpr("e.id DESC").Limit(int64(limit)).Scan(ctx, &out)
	if err != nil || len(out) == 0 {
		return int(n), out, translate(err)
	}
	ids := make([]int64, 0, len(out))
	for i := range out {
		out[i].ClaimID, _ = strconv.ParseInt(strings.TrimPrefix(out[i].Subject, "cl_"), 10, 64)
		ids = append(ids, out[i].ClaimID)
	}
	var claims []struct {
		ID        int64  `bun:"id"`
		Statement string `bun:"statement"`
	}
	err = f.q.NewSelect().TableExpr("claims AS c").ColumnExpr("c.id, c.statement").
		Where("c.id IN (?)", bun.In(ids)).Scan(ctx, &claims)
	statements := make(map[int64]string, len(claims))
	for _, c := range claims {
		statements[c.ID] = c.Statement
	}
	for i := range out {
		out[i].Statement = statements[out[i].ClaimID]
	}
	return int(n), out, translate(err)
}

// WaitingThread is a thread that waits for someone, with since when. TitleHidden: its
// opening message, whose first line the title is, is hidden (§ 18).
type WaitingThread struct {
	ID               int64      `bun:"id"`
	Title            string     `bun:"title"`
	TitleHidden      bool       `bun:"title_hidden"`
	State            string     `bun:"state"`
	StateConfirmedAt *time.Time `bun:"state_confirmed_at"`
	AwaitingMode     string     `bun:"awaiting_mode"`
	AwaitingIdentity string     `bun:"awaiting_identity"`
	UpdatedAt        time.Time  `bun:"updated_at"`
}

// ThreadsWaitingLongest reads the threads in scope that wait — their state is a proposal no
// human confirmed yet, or it is someone's turn (they are in an inbox) — the one whose last
// activity is oldest first. It is the forum now: s.Since does not narrow it.
func (f *Forum) ThreadsWaitingLongest(ctx context.Context, s RecordScope, limit int) ([]WaitingThread, error) {
	var out []WaitingThread
	q := f.q.NewSelect().TableExpr("threads AS t").
		ColumnExpr("t.id, t.title, t.title_hidden, t.state, t.state_confirmed_at, t.awaiting_mode, t.awaiting_identity, t.updated_at").
		Where("(t.state_confirmed_at IS NULL OR t.inbox_to IS NOT NULL)").
		OrderExpr("t.updated_at, t.id").Limit(int64(limit))
	if s.Threads != nil {
		q = s.Threads(q, "t.id")
	}
	err := q.Scan(ctx, &out)
	return out, translate(err)
}
