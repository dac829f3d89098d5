package protocol

import (
	"fmt"
	"time"

	"github.com/parleyforum/parley/graph"
	"github.com/parleyforum/parley/storage"
)

// § 14 signed: a stance is signed with a proof (signed_stance.go). Stances stored before
// § 14 may carry a version 1 signature, {key, at, sig}: an Ed25519 signature over the JCS
// form of {at, by, claim, evidence, statement_sha256}, which covers too little (not the kind
// of stance, nor its note). Those are still read, exported as legacy_signature and checked by
// verify-export; a new stance that sends one is refused (refuseSignature).

// SignedVersion is the version of the profile this instance implements.
const SignedVersion = "2"

// SignatureMaxSkew is how far a proof's created may be from the server's clock: a stale or
// future-dated proof is refused, so that an old one cannot be replayed later.
const SignatureMaxSkew = 10 * time.Minute

// SignatureView is a stored stance's version 1 signature as returned, the same object the
// graph and its exports carry: the key, its public key (base64), the at as it was signed and
// the signature (base64).
type SignatureView = graph.Signature

// refuseSignature refuses the version 1 signature field on a new stance: it covers too
// little to be accepted any more, and silently dropping it would store the stance unsigned.
func refuseSignature(o *object) *Error {
	if _, ok := o.take("signature"); !ok {
		return nil
	}
	return Refuse(ReasonInvalidBody, "field signature (version 1, {key, at, sig}) is no longer accepted: "+
		"sign the stance with proof instead, a DataIntegrityProof of cryptosuite eddsa-jcs-2022 (see the manifest's profile signed)")
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

func init() {
	profiles = append(profiles, ProfileInfo{
		Name:    "signed",
		Version: SignedVersion,
		About:   "Stances signed as W3C Data Integrity documents (eddsa-jcs-2022, did:key) that anyone can check offline; a realm key (realm_key) signs key bindings and exports.",
		Parameters: map[string]string{
			"keys":     "PUT /v1/keys or key_register {public_key: standard base64 of the 32 bytes of an Ed25519 public key} (needs write): 201 {key: {id, identity, public_key, did, binding, created_at}}, 200 for a key registered before; a key of small order is invalid_body, a key another identity holds invalid_transition; GET /v1/keys?identity=… lists an identity's keys",
			"document": "{type: ParleyStance, stance: attest|refute|verify, realm, claim: cl_<n>, statement_sha256: lowercase hex SHA-256 of the claim's statement, by: your identity, evidence: the items as sent (kind, ref, note when given), note (when sent) or body (refute), and on a claim imported from another realm origin: {realm, claim} as the claim's origin reads}",
			"proof":    "attest, refute and verify take proof {type: DataIntegrityProof, cryptosuite: eddsa-jcs-2022, created: now (RFC 3339), verificationMethod: <your key's did>#<its z… part>, proofPurpose: assertionMethod, proofValue: z + base58btc of the Ed25519 signature over SHA-256(JCS(proof without proofValue)) followed by SHA-256(JCS(document))}",
			"checks": fmt.Sprintf("the key must be registered to your identity and created within %d minutes of the server's clock; "+
				"a proof that does not hold, a foreign key or a stale created is invalid_body and nothing is written", int(SignatureMaxSkew.Minutes())),
			"exports": "every export carries each stance's document with its proof, each key's binding and a proof of the export by realm_key; parley verify-export FILE checks them offline",
			"imports": "POST /v1/imports (a human administrator; body: another realm's JSON export or jsonl dataset, at most import_max_bytes, thread? th_N): only from a realm this forum trusts (--trust-realm NAME=DID), every proof checked and every item held to this forum's rules before anything is written; a realm speaks only for its own identities (another realm's items need that realm's proofs); claims land with origin {realm, claim, thread, imported_at} and keep their created_at, valid_until and provenance, stances their at and provenance; their authors keep their realm; the same export again writes nothing",
			"legacy":  "signature {key, at, sig} (version 1: Ed25519 over the JCS of {at, by, claim, evidence, statement_sha256}) is invalid_body on a new stance; stances stored with one keep it, exports carry it as legacy_signature and verify-export checks it",
		},
	})
}
