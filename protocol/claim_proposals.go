package protocol

import (
	"context"

	"github.com/parleyforum/parley/storage"
)

// § 5 applies to claims too: a state a model gives a claim (supported by its attestation,
// verified by its seal, refuted by its refutation, with write and no lock) is a proposal,
// unconfirmed until a human confirms it or re-marks it. The humans' queue lists these beside
// the threads' proposals; confirming one is a human's mark with the claim's own state, so it
// is the same event as any mark and changes nothing else.

// ProposableClaimStates are the states a claim's proposal can have. An unverified claim is
// only asserted (nothing to confirm) and superseded is given by a newer claim, not proposed.
var ProposableClaimStates = []ClaimState{ClaimSupported, ClaimVerified, ClaimRefuted}

// ClaimProposal is one claim whose state waits for a human: the claim, the event that made
// its state (nil when none is recorded) and the state it had before, where an undo of the
// confirm re-marks it back to ("" when unknown).
type ClaimProposal struct {
	Claim *ClaimView `json:"claim"`
	Event *EventView `json:"event"`
	Was   ClaimState `json:"was,omitempty"`
}

// ClaimProposalsResult is one page of the claims' proposals, the oldest claim first.
type ClaimProposalsResult struct {
	Proposals []ClaimProposal `json:"proposals"`
	Cursor    *string         `json:"cursor"`
	More      bool            `json:"more"`
}

// ClaimConfirmed answers a confirm: the claim as it is now, and the state it had before its
// proposal (what an undo re-marks it back to; "" when unknown).
type ClaimConfirmed struct {
	Claim *ClaimView
	Was   ClaimState
}

const claimProposalsCursorTag = "v1p"

// IsClaimProposal reports whether a claim's state is a proposal a human can confirm: one of
// ProposableClaimStates, unconfirmed. The pages offer the confirm control where it holds.
func IsClaimProposal(c *ClaimView) bool {
	return !c.Confirmed && proposable(c.State)
}

func proposable(s ClaimState) bool {
	for _, p := range ProposableClaimStates {
		if s == p {
			return true
		}
	}
	return false
}

func proposableNames() []string {
	out := make([]string, len(ProposableClaimStates))
	for i, s := range ProposableClaimStates {
		out[i] = string(s)
	}
	return out
}

// ClaimProposals answers one page of the claims whose state is a model's proposal, oldest
// first, leaving out the claims of closed and confirmed threads (which accept nothing).
func (s *Service) ClaimProposals(ctx context.Context, a *Actor, cursor string, limit int) (*ClaimProposalsResult, error) {
	if err := requireActor(a, RightRead); err != nil {
		return nil, err
	}
	list := ListOf(a, "claim_proposals")
	after, refusal := s.afterCursor(claimProposalsCursorTag, list, cursor)
	if refusal != nil {
		return nil, refusal
	}
	limit = s.pageSize(limit)
	read := s.reader(a)
	claims, err := read.ClaimProposals(ctx, proposableNames(), string(StateClosed), after, limit+1)
	if err != nil {
		return nil, fault(err)
	}
	res := &ClaimProposalsResult{Proposals: []ClaimProposal{}}
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
	events, err := read.ClaimStateEvents(ctx, claims)
	if err != nil {
		return nil, fault(err)
	}
	for i, v := range claimViews(claims, stances, supersedesOf(claims), s.limits.VerifyQuorum, storage.Now()) {
		p := ClaimProposal{Claim: v}
		if ev, ok := events[claims[i].ID]; ok {
			p.Event, p.Was = eventView(&ev), ClaimState(*ev.FromState)
		}
		res.Proposals = append(res.Proposals, p)
	}
	if res.More {
		c, refusal := s.encodeCursor(claimProposalsCursorTag, list, claims[len(claims)-1].ID)
		if refusal != nil {
			return nil, refusal
		}
		res.Cursor = &c
	}
	return res, nil
}

// QueueCount counts everything that waits for a human in the queue: the threads' proposals
// and the claims'. Zero for an actor that may not read.
func (s *Service) QueueCount(ctx context.Context, a *Actor) (int, error) {
	q, err := s.QueueCounts(ctx, a)
	return q.Threads + q.Claims, err
}

// QueueCounts is what waits in the queue now, within a's rooms, by kind: the threads' state
// proposals and the claims'. Both zero for an actor that may not read.
type QueueCounts struct {
	Threads, Claims int
}

// QueueCounts counts the queue by kind; QueueCount is their sum.
func (s *Service) QueueCounts(ctx context.Context, a *Actor) (QueueCounts, error) {
	var q QueueCounts
	if requireActor(a, RightRead) != nil {
		return q, nil
	}
	read := s.reader(a)
	var err error
	if q.Threads, err = read.CountProposals(ctx); err != nil {
		return QueueCounts{}, fault(err)
	}
	if q.Claims, err = read.CountClaimProposals(ctx, proposableNames(), string(StateClosed)); err != nil {
		return QueueCounts{}, fault(err)
	}
	return q, nil
}

// ConfirmClaim answers {claim}: a human confirms the claim's proposal, which is a mark with
// its own state (origin user, confirmed). A claim whose state is confirmed already, or is not
// a proposal (unverified, superseded), is 409 invalid_transition.
func (s *Service) ConfirmClaim(ctx context.Context, a *Actor, raw []byte) (*ClaimConfirmed, error) {
	o, id, err := claimInput(a, raw)
	if err != nil {
		return nil, err
	}
	if err := o.rest(); err != nil {
		return nil, err
	}
	if a == nil || !a.Human {
		return nil, Refuse(ReasonTokenRightMissing, "confirming a claim is for humans only")
	}
	var was ClaimState
	res, txErr := s.runClaimTx(ctx, a, "", func(ctx context.Context, c *claimTx) (*storage.Claim, error) {
		claim, err := c.lockedClaim(ctx, id)
		if err != nil {
			return nil, err
		}
		if err := c.checkOpen(); err != nil {
			return nil, err
		}
		state := ClaimState(claim.State)
		switch {
		case claim.StateConfirmedAt != nil:
			return nil, Refuse(ReasonInvalidTransition, "the state %s of claim %s is already confirmed", state, ClaimKey(id))
		case !proposable(state):
			return nil, Refuse(ReasonInvalidTransition, "claim %s is %s: not a proposal to confirm (a proposal is supported, verified or refuted)", ClaimKey(id), state)
		}
		events, err := c.f.ClaimStateEvents(ctx, []storage.Claim{*claim})
		if err != nil {
			return nil, err
		}
		if ev, ok := events[claim.ID]; ok {
			was = ClaimState(*ev.FromState)
		}
		if err := c.reserve(ctx); err != nil {
			return nil, err
		}
		return claim, c.change(ctx, claim, OpMark, state, state)
	})
	if txErr != nil {
		return nil, txErr
	}
	return &ClaimConfirmed{Claim: res.Claim, Was: was}, nil
}
