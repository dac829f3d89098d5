package storage

import (
	"context"
	"strconv"

	"github.com/uptrace/bun"
)

// The claims whose state is a model's proposal, waiting for a human (the moderation queue
// and the navigation's count). The operation layer names the states (protocol.ClaimProposals).

// claimProposals selects the claims in one of states whose state is unconfirmed, leaving out
// the claims of threads in lockedState whose state is confirmed, which accept nothing.
func (f *Forum) claimProposals(q *bun.SelectQuery, states []string, lockedState string) *bun.SelectQuery {
	q = q.Where("claim.state_confirmed_at IS NULL").
		Where("claim.state IN (?)", bun.In(states)).
		Where("NOT EXISTS (SELECT 1 FROM threads AS t WHERE t.id = claim.thread_id AND t.state = ? AND t.state_confirmed_at IS NOT NULL)", lockedState)
	return f.scope.onThreads(q, "claim.thread_id")
}

// ClaimProposals reads up to limit such claims after the claim afterID (0: from the start),
// the oldest first.
func (f *Forum) ClaimProposals(ctx context.Context, states []string, lockedState string, afterID int64, limit int) ([]Claim, error) {
	var out []Claim
	q := f.q.NewSelect().Model(&out).Where("claim.id > ?", afterID).Order("claim.id").Limit(int64(limit))
	err := f.claimProposals(q, states, lockedState).Scan(ctx)
	return out, translate(err)
}

// CountClaimProposals counts them all.
func (f *Forum) CountClaimProposals(ctx context.Context, states []string, lockedState string) (int, error) {
	n, err := f.claimProposals(f.q.NewSelect().Model((*Claim)(nil)), states, lockedState).Count(ctx)
	return int(n), translate(err)
}

// CountProposals counts the threads whose state is unconfirmed (Proposals lists them).
func (f *Forum) CountProposals(ctx context.Context) (int, error) {
	q := f.q.NewSelect().Model((*Thread)(nil)).Where("state_confirmed_at IS NULL")
	n, err := f.scope.onRooms(q, "room_id").Count(ctx)
	return int(n), translate(err)
}

// ClaimStateEvents maps each of claims to the last event that changed its state (its from
// and to differ): for a proposal, the event that made it. A claim without one is missing.
func (f *Forum) ClaimStateEvents(ctx context.Context, claims []Claim) (map[int64]Event, error) {
	out := map[int64]Event{}
	if len(claims) == 0 {
		return out, nil
	}
	threads, subjects := make([]int64, 0, len(claims)), make([]string, 0, len(claims))
	for _, c := range claims {
		threads = append(threads, c.ThreadID)
		subjects = append(subjects, claimKey(c.ID))
	}
	// The thread's events are found by their index; the subject picks the claim's among them.
	last := f.q.NewSelect().Model((*Event)(nil)).ColumnExpr("MAX(id)").
		Where("thread_id IN (?)", bun.In(threads)).Where("subject IN (?)", bun.In(subjects)).
		Where("from_state IS NOT NULL AND from_state <> to_state").Group("subject")
	var events []Event
	if err := f.q.NewSelect().Model(&events).Where("id IN (?)", last).Scan(ctx); err != nil {
		return nil, translate(err)
	}
	byKey := map[string]Event{}
	for _, e := range events {
		byKey[e.Subject] = e
	}
	for _, c := range claims {
		if e, ok := byKey[claimKey(c.ID)]; ok {
			out[c.ID] = e
		}
	}
	return out, nil
}

// claimKey is a claim's prefixed id, as events name their subject.
func claimKey(id int64) string { return "cl_" + strconv.FormatInt(id, 10) }
