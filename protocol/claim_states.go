package protocol

import "time"

// § 12: the states of a claim, its graded certainty and its transitions.

// ClaimState is a claim's one state.
type ClaimState string

const (
	ClaimUnverified ClaimState = "unverified"
	ClaimSupported  ClaimState = "supported"
	ClaimVerified   ClaimState = "verified"
	ClaimRefuted    ClaimState = "refuted"
	ClaimSuperseded ClaimState = "superseded"
)

// ClaimStates lists every claim state, the graded ones in the order of their certainty.
var ClaimStates = []ClaimState{ClaimRefuted, ClaimUnverified, ClaimSupported, ClaimVerified, ClaimSuperseded}

// IsClaimState reports whether s is one of the five claim states.
func IsClaimState(s ClaimState) bool {
	for _, c := range ClaimStates {
		if s == c {
			return true
		}
	}
	return false
}

// ClaimOp is a dialectic operation that changes a claim.
type ClaimOp string

const (
	OpAssert    ClaimOp = "assert"
	OpAttest    ClaimOp = "attest"
	OpRefute    ClaimOp = "refute"
	OpVerify    ClaimOp = "verify"
	OpSupersede ClaimOp = "supersede" // what an assert with supersedes does to each older claim
	OpMark      ClaimOp = "mark"
)

// Graded certainty (§ 12): refuted < unverified < supported < verified; a superseded or
// expired claim is shown apart, with its own word instead of a grade. One precedence rule
// (Certainty): a claim that ended, refuted or superseded, shows how it ended even past its
// valid_until; expiry grades only a standing claim (unverified, supported, verified).
const (
	CertaintySuperseded = "superseded"
	CertaintyExpired    = "expired"
)

// CertaintyOrder is the grading, lowest first.
var CertaintyOrder = []ClaimState{ClaimRefuted, ClaimUnverified, ClaimSupported, ClaimVerified}

// Certainty is the grade a claim shows, the one rule every page, export and record uses: a
// refuted or superseded claim shows how it ended, expired or not; a standing claim past its
// valid_until shows expired; else its state.
func Certainty(state ClaimState, expired bool) string {
	switch {
	case state == ClaimRefuted || state == ClaimSuperseded:
		return string(state)
	case expired:
		return CertaintyExpired
	default:
		return string(state)
	}
}

// Expired is derived at read time: a claim past its valid_until.
func Expired(validUntil *time.Time, now time.Time) bool {
	return validUntil != nil && !now.Before(*validUntil)
}

// ClaimFacts are what the transition rule needs to know of a claim.
type ClaimFacts struct {
	State   ClaimState
	Expired bool
	// Verifiers counts the distinct verifiers before this operation.
	Verifiers int
}

// claimTransitions is § 12's table: for each operation, the state each current state goes
// to. A state that is missing refuses the operation with invalid_transition. Attest and
// verify on an expired claim are refused too (ClaimNext).
var claimTransitions = map[ClaimOp]map[ClaimState]ClaimState{
	OpAttest: {ClaimUnverified: ClaimSupported, ClaimSupported: ClaimSupported, ClaimVerified: ClaimVerified},
	// The Popperian asymmetry: a proven refutation topples support and even the seal.
	OpRefute: {ClaimUnverified: ClaimRefuted, ClaimSupported: ClaimRefuted, ClaimVerified: ClaimRefuted, ClaimRefuted: ClaimRefuted},
	// verified once the quorum is reached (ClaimNext); supported until then.
	OpVerify:    {ClaimSupported: ClaimVerified},
	OpSupersede: {ClaimUnverified: ClaimSuperseded, ClaimSupported: ClaimSuperseded, ClaimVerified: ClaimSuperseded},
}

// ClaimNext is the state a claim goes to under op, or the invalid_transition refusal.
// quorum is verify_quorum: the claim becomes verified at the quorum-th distinct verifier.
func ClaimNext(op ClaimOp, c ClaimFacts, quorum int) (ClaimState, *Error) {
	if c.Expired && (op == OpAttest || op == OpVerify) {
		return "", Refuse(ReasonInvalidTransition, "the claim has expired (past its valid_until); %s is no longer possible", op)
	}
	next, ok := claimTransitions[op][c.State]
	if !ok {
		return "", Refuse(ReasonInvalidTransition, "%s is not possible on a %s claim%s", op, c.State, claimHint(op))
	}
	if op == OpVerify && c.Verifiers+1 < quorum {
		return ClaimSupported, nil
	}
	return next, nil
}

func claimHint(op ClaimOp) string {
	switch op {
	case OpVerify:
		return "; a verifier seals only a supported claim"
	case OpSupersede:
		return "; a superseded or refuted claim cannot be superseded again"
	default:
		return ""
	}
}
