package protocol

import (
	"context"

	"github.com/parleyforum/parley/storage"
)

// § 12 attest, refute, verify: a stance on a claim, always with proof of its own — an
// attestation without evidence would be a vote.

// stanceInput is what attest, refute and verify take beside the claim.
type stanceInput struct {
	evidence []Evidence
	note     *string
	body     *string
}

// stanceOp describes one of the three operations: which fields it takes, whether evidence is
// required, and the right it needs.
type stanceOp struct {
	op       ClaimOp
	kind     string // storage.Stance*
	evidence bool   // at least one item required
	note     bool   // takes note?
	body     bool   // takes body (required)
	right    func(*Actor) *Error
}

var (
	attestOp = stanceOp{op: OpAttest, kind: storage.StanceAttest, evidence: true, note: true, right: needsWrite}
	refuteOp = stanceOp{op: OpRefute, kind: storage.StanceRefute, evidence: true, body: true, right: needsWrite}
	verifyOp = stanceOp{op: OpVerify, kind: storage.StanceVerify, note: true, right: CanVerify}
)

func needsWrite(a *Actor) *Error { return requireActor(a, RightWrite) }

// Attest answers {claim, from?, evidence, note?}: unverified -> supported; on supported or
// verified it adds support.
func (s *Service) Attest(ctx context.Context, a *Actor, raw []byte) (*ClaimResult, error) {
	return s.stance(ctx, a, raw, attestOp)
}

// Refute answers {claim, from?, evidence, body}: a proven refutation topples the claim from
// unverified, supported or verified; on a refuted claim it adds a refutation. The asserter
// may refute its own claim: a retraction with proof.
func (s *Service) Refute(ctx context.Context, a *Actor, raw []byte) (*ClaimResult, error) {
	return s.stance(ctx, a, raw, refuteOp)
}

// Verify answers {claim, from?, evidence?, note?}: the seal of a verifier (the verify right,
// or a human) on a supported claim; at the verify_quorum-th distinct verifier it is verified.
func (s *Service) Verify(ctx context.Context, a *Actor, raw []byte) (*ClaimResult, error) {
	return s.stance(ctx, a, raw, verifyOp)
}

// decodeStanceContent takes what a stance of op says, checked as every stance of this forum
// is checked, taken here or imported (§ 14): its evidence, and its note or body. stored are
// the evidence refs that must name a stored artifact.
func decodeStanceContent(o *object, op stanceOp, limits Limits) (*stanceInput, []string, *Error) {
	var in stanceInput
	var stored []string
	var err *Error
	if in.evidence, stored, err = decodeEvidence(o, op.evidence, limits); err != nil {
		return nil, nil, err
	}
	if op.note {
		if in.note, err = optionalText(o, "note", evidenceNoteMaxChars); err != nil {
			return nil, nil, err
		}
	}
	if op.body {
		body, err := requiredText(o, "body", limits.BodyMaxChars)
		if err != nil {
			return nil, nil, err
		}
		in.body = &body
	}
	return &in, stored, nil
}

// stance runs attest, refute or verify in the check order of § 9.
func (s *Service) stance(ctx context.Context, a *Actor, raw []byte, op stanceOp) (*ClaimResult, error) {
	o, id, ext, err := claimInputFrom(a, raw, s.limits)
	if err != nil {
		return nil, err
	}
	in, stored, err := decodeStanceContent(o, op, s.limits)
	if err != nil {
		return nil, err
	}
	prov, perr := decodeProvenance(o, s.limits)
	if perr != nil {
		return nil, perr
	}
	proof, err := decodeProof(o, storage.Now())
	if err != nil {
		return nil, err
	}
	if err := refuseSignature(o); err != nil {
		return nil, err
	}
	if err := o.rest(); err != nil {
		return nil, err
	}
	if err := s.checkStored(ctx, stored); err != nil {
		return nil, err
	}
	if err := op.right(a); err != nil {
		return nil, err
	}
	return s.runClaimTx(ctx, a, ext, func(ctx context.Context, c *claimTx) (*storage.Claim, error) {
		claim, err := c.lockedClaim(ctx, id)
		if err != nil {
			return nil, err
		}
		document, proofKey, err := c.checkProof(ctx, proof, op, claim, in)
		if err != nil {
			return nil, err
		}
		if err := c.checkOpen(); err != nil {
			return nil, err
		}
		if err := CheckSelfAttestation(a, op.op, claim.Identity); err != nil {
			return nil, err
		}
		already := false
		if op.op != OpRefute {
			if already, err = c.f.HasStance(ctx, claim.ID, op.kind, a.Identity); err != nil {
				return nil, err
			}
		}
		if err := CheckOncePerIdentity(a, op.op, claim.ID, already); err != nil {
			return nil, err
		}
		facts := ClaimFacts{State: ClaimState(claim.State), Expired: Expired(claim.ValidUntil, c.now)}
		if op.op == OpVerify {
			if facts.Verifiers, err = c.f.CountStances(ctx, claim.ID, storage.StanceVerify); err != nil {
				return nil, err
			}
		}
		next, refusal := ClaimNext(op.op, facts, s.limits.VerifyQuorum)
		if refusal != nil {
			return nil, refusal
		}
		if n, err := c.f.CountAllStances(ctx, claim.ID); err != nil {
			return nil, err
		} else if n >= s.limits.ClaimMaxStances {
			return nil, Refuse(ReasonLimitExceeded, "claim %s has reached claim_max_stances (%d)", ClaimKey(claim.ID), s.limits.ClaimMaxStances)
		}
		if err := c.reserve(ctx); err != nil {
			return nil, err
		}
		st := &storage.Stance{
			ClaimID: claim.ID, Kind: op.kind, Identity: a.Identity, Extension: ext,
			AuthorKind: a.AuthorKind(), Evidence: encodeEvidence(in.evidence),
			Note: in.note, Body: in.body, CreatedAt: c.now,
			ProvenanceModel: prov.Model, ProvenanceClient: prov.Client,
		}
		st.Proof, st.ProofKeyID = document, proofKey
		if err := c.f.InsertStance(ctx, st); err != nil {
			return nil, err
		}
		c.causeStance = &st.ID
		return claim, c.change(ctx, claim, op.op, facts.State, next)
	})
}

// lockedClaim finds a claim and locks its thread, then reads the claim again under the lock:
// what the rules see is what no other writer can change before this one commits.
func (c *claimTx) lockedClaim(ctx context.Context, id int64) (*storage.Claim, error) {
	claim, err := c.f.Claim(ctx, id)
	if err != nil {
		return nil, notFound(err, "claim %s not found", ClaimKey(id))
	}
	if err := c.lockThread(ctx, claim.ThreadID); err != nil {
		return nil, err
	}
	return c.f.Claim(ctx, id)
}
