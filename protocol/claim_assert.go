package protocol

import (
	"context"
	"errors"

	"github.com/parleyforum/parley/storage"
)

// § 12 assert: a new claim with its proof, anchored in a message of its thread; it may
// supersede older claims of that thread.

// claimContent is what a claim says, checked as every claim of this forum is checked,
// asserted here or imported (§ 14): from, statement and evidence; stored are the evidence
// refs that must name a stored artifact.
type claimContent struct {
	ext       string
	statement string
	evidence  []Evidence
	stored    []string
}

// decodeClaimContent takes a claim's from, statement and evidence.
func decodeClaimContent(o *object, limits Limits) (*claimContent, *Error) {
	ext, err := decodeFrom(o, limits)
	if err != nil {
		return nil, err
	}
	statement, err := requiredText(o, "statement", limits.BodyMaxChars)
	if err != nil {
		return nil, err
	}
	evidence, stored, err := decodeEvidence(o, true, limits)
	if err != nil {
		return nil, err
	}
	return &claimContent{ext: ext, statement: statement, evidence: evidence, stored: stored}, nil
}

// Assert answers {thread, parent?, from?, statement, evidence, supersedes?, valid_until?,
// provenance?}.
func (s *Service) Assert(ctx context.Context, a *Actor, raw []byte) (*ClaimResult, error) {
	o, threadID, err := threadInput(a, raw)
	if err != nil {
		return nil, err
	}
	anchorID, _, err := o.id("parent", "msg_")
	if err != nil {
		return nil, err
	}
	content, err := decodeClaimContent(o, s.limits)
	if err != nil {
		return nil, err
	}
	ext, statement, evidence, stored := content.ext, content.statement, content.evidence, content.stored
	supersedes, err := decodeSupersedes(o, s.limits)
	if err != nil {
		return nil, err
	}
	validUntil, err := decodeValidUntil(o, storage.Now())
	if err != nil {
		return nil, err
	}
	prov, err := decodeProvenance(o, s.limits)
	if err != nil {
		return nil, err
	}
	if err := o.rest(); err != nil {
		return nil, err
	}
	if err := s.checkStored(ctx, stored); err != nil {
		return nil, err
	}
	if err := requireActor(a, RightWrite); err != nil {
		return nil, err
	}
	return s.runClaimTx(ctx, a, ext, func(ctx context.Context, c *claimTx) (*storage.Claim, error) {
		if err := c.lockThread(ctx, threadID); err != nil {
			return nil, err
		}
		t := c.thread
		if anchorID == 0 {
			anchorID = *t.RootMessageID
		} else if m, err := c.f.Message(ctx, anchorID); err != nil || m.ThreadID != t.ID {
			if err != nil && !errors.Is(err, storage.ErrNotFound) {
				return nil, err
			}
			return nil, Refuse(ReasonNotFound, "message %s not found in thread %s", MessageKey(anchorID), ThreadKey(t.ID))
		}
		older := make([]*storage.Claim, 0, len(supersedes))
		for _, id := range supersedes {
			old, err := c.f.Claim(ctx, id)
			if err != nil {
				return nil, notFound(err, "claim %s not found", ClaimKey(id))
			}
			older = append(older, old)
		}
		if err := c.checkOpen(); err != nil {
			return nil, err
		}
		for _, old := range older {
			if err := CheckSupersedeAuthority(a, old, c.facts()); err != nil {
				return nil, err
			}
		}
		for _, old := range older {
			if old.ThreadID != t.ID {
				return nil, Refuse(ReasonInvalidTransition, "%s lives in thread %s; a claim supersedes only claims of its own thread", ClaimKey(old.ID), ThreadKey(old.ThreadID))
			}
			// § 15: superseded_by, once set, stays — also when a mark has since moved the
			// claim out of superseded.
			if old.SupersededBy != nil {
				return nil, Refuse(ReasonInvalidTransition, "%s was superseded by %s; a claim is superseded once", ClaimKey(old.ID), ClaimKey(*old.SupersededBy))
			}
			facts := ClaimFacts{State: ClaimState(old.State), Expired: Expired(old.ValidUntil, c.now)}
			if _, refusal := ClaimNext(OpSupersede, facts, s.limits.VerifyQuorum); refusal != nil {
				refusal.Message = ClaimKey(old.ID) + ": " + refusal.Message
				return nil, refusal
			}
		}
		if n, err := c.f.CountClaimsOf(ctx, t.ID); err != nil {
			return nil, err
		} else if n >= s.limits.ThreadMaxClaims {
			return nil, Refuse(ReasonLimitExceeded, "thread %s has reached thread_max_claims (%d)", ThreadKey(t.ID), s.limits.ThreadMaxClaims)
		}
		if err := c.reserve(ctx); err != nil {
			return nil, err
		}
		claim := &storage.Claim{
			ThreadID: t.ID, AnchorID: anchorID, Statement: statement,
			Identity: a.Identity, Extension: ext, AuthorKind: a.AuthorKind(),
			Evidence: encodeEvidence(evidence), ValidUntil: validUntil,
			ProvenanceModel: prov.Model, ProvenanceClient: prov.Client,
			CreatedAt: c.now,
		}
		c.applyState(claim, OpAssert, nil, ClaimUnverified)
		if err := c.f.InsertClaim(ctx, claim); err != nil {
			return nil, err
		}
		if err := c.appendEvent(ctx, claim, OpAssert, nil, ClaimUnverified); err != nil {
			return nil, err
		}
		c.causeClaim = &claim.ID
		for _, old := range older {
			old.SupersededBy = &claim.ID
			if err := c.change(ctx, old, OpSupersede, ClaimState(old.State), ClaimSuperseded); err != nil {
				return nil, err
			}
		}
		return claim, nil
	})
}
