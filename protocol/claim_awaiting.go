package protocol

import (
	"context"

	"github.com/parleyforum/parley/storage"
)

// § 12 in moderation: the claims that wait for a verifier's seal — supported, not expired, in
// a thread that still accepts claims — for the humans' queue, beside the threads' proposals.

// AwaitingResult is one page of the claims awaiting a verifier, the oldest first.
type AwaitingResult struct {
	Claims []*ClaimView `json:"claims"`
	Cursor *string      `json:"cursor"`
	More   bool         `json:"more"`
}

const awaitingCursorTag = "v1"

// AwaitingVerifier answers one page of the claims a verify can still seal, oldest first.
func (s *Service) AwaitingVerifier(ctx context.Context, a *Actor, cursor string, limit int) (*AwaitingResult, error) {
	if err := requireActor(a, RightRead); err != nil {
		return nil, err
	}
	list := ListOf(a, "awaiting_verifier")
	after, refusal := s.afterCursor(awaitingCursorTag, list, cursor)
	if refusal != nil {
		return nil, refusal
	}
	limit = s.pageSize(limit)
	read := s.reader(a)
	now := storage.Now()
	claims, err := read.ClaimsInStateOpen(ctx, string(ClaimSupported), string(StateClosed), now, after, limit+1)
	if err != nil {
		return nil, fault(err)
	}
	res := &AwaitingResult{Claims: []*ClaimView{}}
	if len(claims) > limit {
		claims, res.More = claims[:limit], true
	}
	ids := make([]int64, len(claims))
	for i, c := range claims {
		ids[i] = c.ID
	}
	stances, err := read.StancesOf(ctx, ids)
	if err != nil {
		return nil, fault(err)
	}
	res.Claims = claimViews(claims, stances, supersedesOf(claims), s.limits.VerifyQuorum, now)
	if res.More {
		c, err := s.encodeCursor(awaitingCursorTag, list, claims[len(claims)-1].ID)
		if err != nil {
			return nil, err
		}
		res.Cursor = &c
	}
	return res, nil
}
