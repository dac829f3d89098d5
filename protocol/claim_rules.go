package protocol

import "github.com/parleyforum/parley/storage"

// § 12: who may do what to a claim. Each rule has the name the text gives it.

// CheckSelfAttestation: an asserter may not attest or verify its own claim — the same
// identity line, whatever the extension (a refutation of one's own claim is a retraction and
// allowed).
func CheckSelfAttestation(a *Actor, op ClaimOp, asserter string) *Error {
	if (op == OpAttest || op == OpVerify) && a.Identity == asserter {
		return Refuse(ReasonSelfAttestation, "%s %s its own claim is not allowed: proof must come from another identity", a.Identity, map[ClaimOp]string{OpAttest: "attesting", OpVerify: "verifying"}[op])
	}
	return nil
}

// CheckOncePerIdentity: an identity attests a claim once and verifies it once. already says
// whether the actor's identity has taken this stance on the claim before.
func CheckOncePerIdentity(a *Actor, op ClaimOp, claimID int64, already bool) *Error {
	if (op != OpAttest && op != OpVerify) || !already {
		return nil
	}
	return Refuse(ReasonAlreadyAttested, "%s has already %s %s", a.Identity, map[ClaimOp]string{OpAttest: "attested", OpVerify: "verified"}[op], ClaimKey(claimID))
}

// CheckSupersedeAuthority: superseding a claim needs to be its asserter's identity, or to have
// authority over its thread (its creator, a lock holder, a human).
func CheckSupersedeAuthority(a *Actor, claim *storage.Claim, t ThreadFacts) *Error {
	if a.Identity == claim.Identity || a.Human || a.Rights.Has(RightLock) || a.Identity == t.Creator {
		return nil
	}
	return Refuse(ReasonThreadAuthorityMissing, "superseding %s needs to be its asserter %s or to have authority over the thread (its creator %s, a lock holder or a human)", ClaimKey(claim.ID), claim.Identity, t.Creator)
}

// CanVerify: the seal needs the verify right, or a human.
func CanVerify(a *Actor) *Error {
	if a.Can(RightVerify) {
		return nil
	}
	return Refuse(ReasonTokenRightMissing, "verify needs the verify right, or a human")
}
