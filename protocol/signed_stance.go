package protocol

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/parleyforum/parley/signed"
	"github.com/parleyforum/parley/storage"
)

// § 14 signed stances, version 2: attest, refute and verify take an optional proof, a W3C Data
// Integrity proof of the eddsa-jcs-2022 cryptosuite over the stance's document
//
//	{type: ParleyStance, stance, realm, claim, statement_sha256, by, evidence, note | body}
//
// (on a claim imported from another realm also origin: {realm, claim}, OnImportedClaim),
// which the server rebuilds from the operation's own fields and the caller's identity. The
// proof must hold, its key must be registered to the caller, and its created must be within
// SignatureMaxSkew of the server's clock; otherwise invalid_body and nothing is written. The
// document with its proof is kept with the stance, exactly as checked, and every export
// carries it.

// proofFields are the members a stance's proof has, every one required.
var proofFields = []string{"type", "cryptosuite", "created", "verificationMethod", "proofPurpose", "proofValue"}

// proofInput is the proof field of attest, refute or verify, decoded and checked in form.
type proofInput struct {
	raw    json.RawMessage
	method string
}

// decodeProof takes the optional proof field: an object with exactly the members of a
// DataIntegrityProof, each a string, of type DataIntegrityProof and cryptosuite
// eddsa-jcs-2022, for assertionMethod, created within SignatureMaxSkew of now.
func decodeProof(o *object, now time.Time) (*proofInput, *Error) {
	raw, ok := o.take("proof")
	if !ok {
		return nil, nil
	}
	inner, err := decodeObject(raw, "proof.")
	if err != nil {
		return nil, err
	}
	values := map[string]string{}
	for _, name := range proofFields {
		v, has, err := inner.str(name)
		if err != nil {
			return nil, err
		}
		if !has {
			return nil, Refuse(ReasonInvalidBody, "field proof.%s is missing", name)
		}
		values[name] = v
	}
	if err := inner.rest(); err != nil {
		return nil, err
	}
	switch {
	case values["type"] != signed.ProofType:
		return nil, Refuse(ReasonInvalidBody, "field proof.type must be %s", signed.ProofType)
	case values["cryptosuite"] != signed.Cryptosuite:
		return nil, Refuse(ReasonInvalidBody, "field proof.cryptosuite must be %s", signed.Cryptosuite)
	case values["proofPurpose"] != signed.AssertionMethod:
		return nil, Refuse(ReasonInvalidBody, "field proof.proofPurpose must be %s", signed.AssertionMethod)
	}
	created, perr := time.Parse(time.RFC3339Nano, values["created"])
	if perr != nil {
		return nil, Refuse(ReasonInvalidBody, "field proof.created must be an RFC 3339 time, such as 2026-12-01T16:00:00Z")
	}
	if skew := now.Sub(created); skew > SignatureMaxSkew || skew < -SignatureMaxSkew {
		return nil, Refuse(ReasonInvalidBody, "field proof.created (%s) is more than %v from the server's clock (%s): sign with the current time",
			values["created"], SignatureMaxSkew, now.UTC().Format(time.RFC3339))
	}
	if _, kerr := signed.ParseDIDKey(values["verificationMethod"]); kerr != nil {
		return nil, Refuse(ReasonInvalidBody, "field proof.verificationMethod: %v", kerr)
	}
	return &proofInput{raw: raw, method: values["verificationMethod"]}, nil
}

// StanceDocument is the document a signed stance's proof covers (§ 14), as the server rebuilds
// it: realm is the realm the stance was made in, claim the claim's id there.
func StanceDocument(stance, realm, claim, statement, by string, evidence []Evidence, note, body *string) map[string]any {
	items := make([]map[string]string, len(evidence))
	for i, e := range evidence {
		items[i] = map[string]string{"kind": e.Kind, "ref": e.Ref}
		if e.Note != nil {
			items[i]["note"] = *e.Note
		}
	}
	doc := map[string]any{
		"type": "ParleyStance", "stance": stance, "realm": realm, "claim": claim,
		"statement_sha256": signed.StatementSHA256(statement), "by": by, "evidence": items,
	}
	if note != nil {
		doc["note"] = *note
	}
	if body != nil {
		doc["body"] = *body
	}
	return doc
}

// OnImportedClaim completes the document of a stance on a claim imported from another realm
// (§ 14): beside the claim's id here it names the claim by its origin, {realm, claim}, so that
// a third realm that imports the claim can bind the stance to it offline. origin nil leaves
// the document as it is.
func OnImportedClaim(doc map[string]any, origin *ClaimOrigin) map[string]any {
	if origin != nil {
		doc["origin"] = map[string]string{"realm": origin.Realm, "claim": origin.Claim}
	}
	return doc
}

// checkProof runs in the stance's transaction, once its claim is found: the proof must hold
// over the rebuilt document with a key registered to the caller. It answers the document with
// its proof (canonical JSON) and the key, to keep with the stance.
func (c *claimTx) checkProof(ctx context.Context, in *proofInput, op stanceOp, claim *storage.Claim, st *stanceInput) (*string, *int64, error) {
	if in == nil {
		return nil, nil, nil
	}
	pub, _ := signed.ParseDIDKey(in.method) // checked by decodeProof
	did := signed.DIDKey(pub)
	key, err := c.f.KeyByDID(ctx, did)
	if errors.Is(err, storage.ErrNotFound) {
		return nil, nil, Refuse(ReasonInvalidBody, "field proof.verificationMethod names %s, which is not a registered key (PUT /v1/keys first)", did)
	}
	if err != nil {
		return nil, nil, err
	}
	if key.Identity != c.actor.Identity {
		return nil, nil, Refuse(ReasonInvalidBody, "field proof.verificationMethod names a key of %s, not of %s", key.Identity, c.actor.Identity)
	}
	doc := StanceDocument(string(op.op), c.s.realm, ClaimKey(claim.ID), claim.Statement, c.actor.Identity, st.evidence, st.note, st.body)
	OnImportedClaim(doc, claimView(claim, nil, c.now).Origin)
	doc["proof"] = in.raw
	secured, err := json.Marshal(doc)
	if err != nil {
		return nil, nil, err
	}
	if _, verr := signed.Verify(secured); verr != nil {
		return nil, nil, Refuse(ReasonInvalidBody, "field proof does not hold: %v (the document is the JCS form of {type: ParleyStance, stance, realm, claim, statement_sha256, by, evidence, note or body, and origin {realm, claim} on an imported claim}, see the signed profile)", verr)
	}
	canonical, err := signed.Canonical(secured)
	if err != nil {
		return nil, nil, err
	}
	text := string(canonical)
	return &text, &key.ID, nil
}
