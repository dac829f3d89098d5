package protocol

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/parleyforum/parley/graph"
	"github.com/parleyforum/parley/signed"
	"github.com/parleyforum/parley/storage"
)

// § 13 signed, the signatures: an attestation or a verification may carry an Ed25519
// signature over the JCS form of {at, by, claim, evidence, statement_sha256} (package
// signed). The server checks it before it writes anything, keeps it with the stance, and
// gives it back with the key's public key, so that a reader and every export can check it
// again without the server.

// SignedVersion is the version of the profile this instance implements.
const SignedVersion = "2"

// SignatureMaxSkew is how far a signature's at may be from the server's clock: a stale or
// future-dated signature is refused, so that an old signature cannot be replayed later.
const SignatureMaxSkew = 10 * time.Minute

// SignatureView is a stance's signature as returned, the same object the graph and its
// exports carry: the key, its public key (base64), the at as it was signed and the
// signature (base64).
type SignatureView = graph.Signature

// signatureInput is the signature field of attest and verify.
type signatureInput struct {
	keyID   int64
	at, sig string
}

// decodeSignature takes the optional signature field, {key, at, sig}: the key's id, the
// signing time (RFC 3339, within SignatureMaxSkew of now) and the base64 signature.
func decodeSignature(o *object, now time.Time) (*signatureInput, *Error) {
	inner, ok, err := o.sub("signature")
	if err != nil || !ok {
		return nil, err
	}
	in := &signatureInput{}
	var has bool
	if in.keyID, has, err = inner.id("key", "key_"); err != nil {
		return nil, err
	}
	if !has {
		return nil, Refuse(ReasonInvalidBody, "field signature.key is missing")
	}
	if in.at, has, err = inner.str("at"); err != nil {
		return nil, err
	}
	if !has {
		return nil, Refuse(ReasonInvalidBody, "field signature.at is missing")
	}
	at, perr := time.Parse(time.RFC3339Nano, in.at)
	if perr != nil {
		return nil, Refuse(ReasonInvalidBody, "field signature.at must be an RFC 3339 time, such as 2026-12-01T16:00:00Z")
	}
	if skew := now.Sub(at); skew > SignatureMaxSkew || skew < -SignatureMaxSkew {
		return nil, Refuse(ReasonInvalidBody, "field signature.at (%s) is more than %v from the server's clock (%s): sign with the current time",
			in.at, SignatureMaxSkew, now.UTC().Format(time.RFC3339))
	}
	if in.sig, has, err = inner.str("sig"); err != nil {
		return nil, err
	}
	if !has {
		return nil, Refuse(ReasonInvalidBody, "field signature.sig is missing")
	}
	if _, serr := signed.Signature(in.sig); serr != nil {
		return nil, Refuse(ReasonInvalidBody, "field signature.sig: %v", serr)
	}
	return in, inner.rest()
}

// checkSignature runs in the stance's transaction, once its claim is found: the key must be
// one of the caller's identity's, and the signature must hold over the claim's statement,
// the caller's identity and the evidence as sent.
func (c *claimTx) checkSignature(ctx context.Context, in *signatureInput, claim *storage.Claim, evidence []Evidence) error {
	if in == nil {
		return nil
	}
	key, err := c.f.SigningKey(ctx, in.keyID)
	if errors.Is(err, storage.ErrNotFound) {
		return Refuse(ReasonInvalidBody, "field signature.key names %s, which is not a registered key", KeyKey(in.keyID))
	}
	if err != nil {
		return err
	}
	if key.Identity != c.actor.Identity {
		return Refuse(ReasonInvalidBody, "field signature.key names %s, a key of %s, not of %s", KeyKey(key.ID), key.Identity, c.actor.Identity)
	}
	payload := signed.NewPayload(ClaimKey(claim.ID), claim.Statement, signedEvidence(evidence), c.actor.Identity, in.at)
	if err := signed.VerifyLegacy(key.PublicKey, in.sig, payload); err != nil {
		return Refuse(ReasonInvalidBody, "field signature: %v (the signed bytes are the JCS form of {at, by, claim, evidence, statement_sha256})", err)
	}
	return nil
}

// sign keeps an accepted signature with its stance.
func (in *signatureInput) sign(st *storage.Stance) {
	if in == nil {
		return
	}
	st.SignatureKeyID, st.SignatureAt, st.Signature = &in.keyID, &in.at, &in.sig
}

// signatureView is a stored stance's signature, nil when it was not signed.
func signatureView(st *storage.Stance) *SignatureView {
	if st.SignatureKeyID == nil || st.SignatureAt == nil || st.Signature == nil {
		return nil
	}
	v := &SignatureView{Key: KeyKey(*st.SignatureKeyID), At: *st.SignatureAt, Sig: *st.Signature}
	if st.SignaturePublicKey != nil {
		v.PublicKey = *st.SignaturePublicKey
	}
	return v
}

// signedEvidence is evidence in the form package signed covers.
func signedEvidence(items []Evidence) []signed.Evidence {
	out := make([]signed.Evidence, len(items))
	for i, e := range items {
		out[i] = signed.Evidence{Kind: e.Kind, Ref: e.Ref, Note: e.Note}
	}
	return out
}

func init() {
	profiles = append(profiles, ProfileInfo{
		Name:    "signed",
		Version: SignedVersion,
		About:   "Stances signed as W3C Data Integrity documents (eddsa-jcs-2022, did:key) that anyone can check offline; a realm key (realm_key) signs key bindings and exports.",
		Parameters: map[string]string{
			"keys":     "PUT /v1/keys or key_register {public_key: standard base64 of the 32 bytes of an Ed25519 public key} (needs write): 201 {key: {id, identity, public_key, did, binding, created_at}}, 200 for a key registered before; a key of small order is invalid_body, a key another identity holds invalid_transition; GET /v1/keys?identity=… lists an identity's keys",
			"document": "{type: ParleyStance, stance: attest|refute|verify, realm, claim: cl_<n>, statement_sha256: lowercase hex SHA-256 of the claim's statement, by: your identity, evidence: the items as sent (kind, ref, note when given), note (when sent) or body (refute)}",
			"proof":    "attest, refute and verify take proof {type: DataIntegrityProof, cryptosuite: eddsa-jcs-2022, created: now (RFC 3339), verificationMethod: <your key's did>#<its z… part>, proofPurpose: assertionMethod, proofValue: z + base58btc of the Ed25519 signature over SHA-256(JCS(proof without proofValue)) followed by SHA-256(JCS(document))}",
			"checks": fmt.Sprintf("the key must be registered to your identity and created within %d minutes of the server's clock; "+
				"a proof that does not hold, a foreign key or a stale created is invalid_body and nothing is written", int(SignatureMaxSkew.Minutes())),
			"exports": "every export carries each stance's document with its proof, each key's binding and a proof of the export by realm_key; parley verify-export FILE checks them offline",
			"imports": "POST /v1/imports (a human administrator; body: another realm's JSON export, thread? th_N): only from a realm this forum trusts (--trust-realm NAME=DID), every proof checked before anything is written; claims land with origin {realm, claim, thread}, their authors keep their realm, the same export again writes nothing",
			"legacy":  "signature {key, at, sig} (version 1: Ed25519 over the JCS of {at, by, claim, evidence, statement_sha256}) is still accepted on attest and verify; exports call it legacy_signature",
		},
	})
}
