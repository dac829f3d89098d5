package protocol

import (
	"context"
	"time"

	"github.com/parleyforum/parley/storage"
)

// § 12 read and mark: a claim with everything said for and against it, and a human's
// re-marking of its state.

// ReadClaim answers {claim}.
func (s *Service) ReadClaim(ctx context.Context, a *Actor, raw []byte) (*ClaimResult, error) {
	o, id, err := claimInput(a, raw)
	if err != nil {
		return nil, err
	}
	if err := o.rest(); err != nil {
		return nil, err
	}
	if err := requireActor(a, RightRead); err != nil {
		return nil, err
	}
	return s.readClaim(ctx, a, id)
}

// readClaim reads one claim with its stances and the claims it superseded.
func (s *Service) readClaim(ctx context.Context, a *Actor, id int64) (*ClaimResult, error) {
	var res *ClaimResult
	err := s.db.Snapshot(ctx, func(ctx context.Context, read *storage.Forum) error {
		var err error
		res, err = s.readClaimIn(ctx, read.In(ScopeOf(a)), id)
		return err
	})
	if err != nil {
		return nil, fault(err)
	}
	return res, nil
}

// readClaimIn is readClaim with the queries of read (one snapshot, or a write's transaction,
// in the actor's scope).
func (s *Service) readClaimIn(ctx context.Context, read *storage.Forum, id int64) (*ClaimResult, error) {
	claim, err := read.Claim(ctx, id)
	if err != nil {
		return nil, notFound(err, "claim %s not found", ClaimKey(id))
	}
	stances, err := read.StancesOf(ctx, []int64{id})
	if err != nil {
		return nil, err
	}
	older, err := read.Supersedes(ctx, id)
	if err != nil {
		return nil, err
	}
	views := claimViews([]storage.Claim{*claim}, stances, map[int64][]int64{id: older}, s.limits.VerifyQuorum, storage.Now())
	return &ClaimResult{Claim: views[0]}, nil
}

// threadClaimsPage reads the claims of a thread with their stances, oldest first, as much of
// them from pos as room takes, each claim's expiry read against now; and where the next page
// begins (nil: at the end).
func (s *Service) threadClaimsPage(ctx context.Context, read *storage.Forum, threadID int64, pos claimPosition, room *pageRoom, now time.Time) ([]*ClaimView, *claimPosition, error) {
	claims, err := read.ClaimsOf(ctx, threadID)
	if err != nil {
		return nil, nil, err
	}
	supersedes := supersedesOf(claims)
	views := map[int64]*ClaimView{}
	page, next, err := pageClaims(ctx, read, claims, pos, room, func(c *storage.Claim, stances []storage.Stance, continued bool) (claimUnits, error) {
		v := claimViews([]storage.Claim{*c}, stances, supersedes, s.limits.VerifyQuorum, now)[0]
		v.Continued = continued
		views[c.ID] = v
		u := claimUnits{stances: make([]int, len(stances))}
		for i := range stances {
			n, err := jsonSize(stanceView(&stances[i]))
			if err != nil {
				return u, err
			}
			u.stances[i] = n
		}
		head := *v
		head.Attestations, head.Refutations, head.Verifications = []*StanceView{}, []*StanceView{}, []*StanceView{}
		var err error
		u.head, err = jsonSize(&head)
		return u, err
	})
	if err != nil {
		return nil, nil, err
	}
	out := make([]*ClaimView, 0, len(page))
	for i := range page {
		v, keep := views[page[i].claim.ID], page[i].kept()
		v.Attestations, v.Refutations, v.Verifications = only(v.Attestations, keep), only(v.Refutations, keep), only(v.Verifications, keep)
		out = append(out, v)
	}
	return out, next, nil
}

// MarkClaim answers {claim, state}: a human re-marks a claim's state (moderation), confirmed,
// with origin user. Marking a superseded claim with another state undoes its supersession;
// superseded itself is given only by a newer claim (assert with supersedes).
func (s *Service) MarkClaim(ctx context.Context, a *Actor, raw []byte) (*ClaimResult, error) {
	o, id, err := claimInput(a, raw)
	if err != nil {
		return nil, err
	}
	state, _, err := o.str("state")
	if err != nil {
		return nil, err
	}
	if !markableClaimState(ClaimState(state)) {
		return nil, Refuse(ReasonInvalidBody, "field state must be one of unverified, supported, verified, refuted")
	}
	if err := o.rest(); err != nil {
		return nil, err
	}
	if a == nil || !a.Human {
		return nil, Refuse(ReasonTokenRightMissing, "mark is for humans only")
	}
	return s.runClaimTx(ctx, a, "", func(ctx context.Context, c *claimTx) (*storage.Claim, error) {
		claim, err := c.lockedClaim(ctx, id)
		if err != nil {
			return nil, err
		}
		if err := c.checkOpen(); err != nil {
			return nil, err
		}
		if err := c.reserve(ctx); err != nil {
			return nil, err
		}
		// § 15: a mark changes the state, never the history: superseded_by stays.
		return claim, c.change(ctx, claim, OpMark, ClaimState(claim.State), ClaimState(state))
	})
}

func markableClaimState(s ClaimState) bool {
	return IsClaimState(s) && s != ClaimSuperseded
}
