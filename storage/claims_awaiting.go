package storage

import (
	"context"
	"time"
)

// ClaimsInStateOpen reads up to limit claims in state that have not expired at now, after
// the claim afterID (0: from the start), the oldest first — leaving out the claims of threads
// in lockedState whose state is confirmed, which accept nothing. The operation layer names
// the states (protocol.AwaitingVerifier).
func (f *Forum) ClaimsInStateOpen(ctx context.Context, state, lockedState string, now time.Time, afterID int64, limit int) ([]Claim, error) {
	var out []Claim
	q := f.q.NewSelect().Model(&out).
		Where("claim.state = ?", state).
		Where("claim.valid_until IS NULL OR claim.valid_until > ?", now).
		Where("claim.id > ?", afterID).
		Where("NOT EXISTS (SELECT 1 FROM threads AS t WHERE t.id = claim.thread_id AND t.state = ? AND t.state_confirmed_at IS NOT NULL)", lockedState).
		Order("claim.id").Limit(int64(limit))
	err := f.scope.onThreads(q, "claim.thread_id").Scan(ctx)
	return out, translate(err)
}
