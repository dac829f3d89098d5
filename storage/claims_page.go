package storage

import (
	"context"

	"github.com/uptrace/bun"
)

// RefutedClaimsOf lists the claims of the given threads (none: of every thread in scope) that
// have at least one refutation: what the grounded labelling of a claim graph read in pages
// needs of the stances it does not read.
func (f *Forum) RefutedClaimsOf(ctx context.Context, threadIDs ...int64) ([]int64, error) {
	claims := f.q.NewSelect().Model((*Claim)(nil)).Column("id")
	if len(threadIDs) > 0 {
		claims = claims.Where("thread_id IN (?)", bun.In(threadIDs))
	}
	claims = f.scope.onThreads(claims, "thread_id")
	stances := f.q.NewSelect().Model((*Stance)(nil)).ColumnExpr("DISTINCT claim_id").
		Where("kind = ?", StanceRefute)
	if f.asOf != nil {
		var err error
		if stances, err = f.stancesAsOf(ctx, stances, "id"); err != nil {
			return nil, err
		}
		claims = f.claimIDsAsOf(claims)
	}
	var out []int64
	err := stances.Where("claim_id IN (?)", claims).Scan(ctx, &out)
	return out, translate(err)
}

// InsertStances stores many stances at once, in batches, and sets their IDs: for filling a
// forum to its limits, where one insert a stance would take minutes.
func (f *Forum) InsertStances(ctx context.Context, stances []Stance) error {
	const batch = 500 // well under SQLite's 32,766 bound variables
	for len(stances) > 0 {
		n := min(batch, len(stances))
		part := stances[:n]
		if _, err := f.q.NewInsert().Model(&part).Returning("id").Exec(ctx); err != nil {
			return translate(err)
		}
		stances = stances[n:]
	}
	return nil
}
