package signed

import (
	"bytes"
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/mr-tron/base58"
)

// Checked is a proof that holds: who made it, when and for what.
type Checked struct {
	// Key is the public key the proof was made with, and DID its did:key.
	Key ed25519.PublicKey
	DID string
	// FromDID tells a did:key verification method from another URL whose fragment is the
	// key's Multikey.
	FromDID            bool
	VerificationMethod string
	Created            string
	ProofPurpose       string
}

// Verify checks the eddsa-jcs-2022 DataIntegrityProof of a JSON document whose verification
// method is a did:key (Data Integrity EdDSA Cryptosuites v1.0, § 3.3.2): nil error when it
// holds, otherwise why not. A document may carry one proof or a set of proofs (an array);
// each must hold, and each is answered in order.
func Verify(doc []byte) ([]Checked, error) {
	fields, err := object(doc)
	if err != nil {
		return nil, fmt.Errorf("the document is %v", err)
	}
	rawProof, has := fields["proof"]
	if !has {
		return nil, errors.New("the document has no proof")
	}
	delete(fields, "proof")
	unsecured, err := json.Marshal(fields)
	if err != nil {
		return nil, err
	}
	var proofs []json.RawMessage
	if bytes.HasPrefix(rawProof, []byte("[")) {
		if err := json.Unmarshal(rawProof, &proofs); err != nil || len(proofs) == 0 {
			return nil, errors.New("the proof set is not a non-empty array of proofs")
		}
	} else {
		proofs = []json.RawMessage{rawProof}
	}
	out := make([]Checked, 0, len(proofs))
	for i, p := range proofs {
		c, err := verifyOne(fields, unsecured, p)
		if err != nil {
			if len(proofs) > 1 {
				return nil, fmt.Errorf("proof %d of %d: %v", i+1, len(proofs), err)
			}
			return nil, err
		}
		out = append(out, *c)
	}
	return out, nil
}

// verifyOne checks one proof over the document without its proof.
func verifyOne(fields map[string]json.RawMessage, unsecured, rawProof []byte) (*Checked, error) {
	opts, err := object(rawProof)
	if err != nil {
		return nil, fmt.Errorf("the proof is %v", err)
	}
	var p struct {
		Type               *string `json:"type"`
		Cryptosuite        *string `json:"cryptosuite"`
		Created            *string `json:"created"`
		VerificationMethod *string `json:"verificationMethod"`
		ProofPurpose       *string `json:"proofPurpose"`
		ProofValue         *string `json:"proofValue"`
	}
	if err := json.Unmarshal(rawProof, &p); err != nil {
		return nil, errors.New("the proof's type, cryptosuite, created, verificationMethod, proofPurpose and proofValue must be strings")
	}
	switch {
	case p.Type == nil || *p.Type != ProofType:
		return nil, fmt.Errorf("the proof's type is not %s", ProofType)
	case p.Cryptosuite == nil || *p.Cryptosuite != Cryptosuite:
		return nil, fmt.Errorf("the proof's cryptosuite is not %s", Cryptosuite)
	case p.VerificationMethod == nil:
		return nil, errors.New("the proof has no verificationMethod")
	case p.ProofPurpose == nil:
		return nil, errors.New("the proof has no proofPurpose")
	case p.ProofValue == nil:
		return nil, errors.New("the proof has no proofValue")
	}
	if p.Created != nil {
		if _, err := time.Parse(time.RFC3339Nano, *p.Created); err != nil {
			return nil, fmt.Errorf("the proof's created %q is not a date-time", *p.Created)
		}
	}
	// § 3.3.2 step 4: a proof with a context needs the document's context to begin with it.
	if ctx, has := opts["@context"]; has && !contextStartsWith(fields["@context"], ctx) {
		return nil, errors.New("the document's @context does not begin with the proof's @context")
	}
	pub, isDID, err := MethodKey(*p.VerificationMethod)
	if err != nil {
		return nil, fmt.Errorf("the proof's verificationMethod: %v", err)
	}
	sig, err := decodeProofValue(*p.ProofValue)
	if err != nil {
		return nil, err
	}
	delete(opts, "proofValue")
	rawOpts, err := json.Marshal(opts)
	if err != nil {
		return nil, err
	}
	data, err := HashData(unsecured, rawOpts)
	if err != nil {
		return nil, err
	}
	if !ed25519.Verify(pub, data, sig) {
		return nil, errors.New("the signature does not hold over the document and the proof options with the key of its verificationMethod")
	}
	c := &Checked{Key: pub, DID: DIDKey(pub), FromDID: isDID, VerificationMethod: *p.VerificationMethod, ProofPurpose: *p.ProofPurpose}
	if p.Created != nil {
		c.Created = *p.Created
	}
	return c, nil
}

// decodeProofValue reads a proofValue: multibase base58btc ("z…") of a 64-byte signature.
func decodeProofValue(v string) ([]byte, error) {
	encoded, ok := bytesCutZ(v)
	if !ok {
		return nil, errors.New("the proofValue is not multibase base58btc (it must begin with z)")
	}
	sig, err := base58.Decode(encoded)
	if err != nil || len(encoded) == 0 {
		return nil, errors.New("the proofValue is not valid base58btc")
	}
	if len(sig) != ed25519.SignatureSize {
		return nil, fmt.Errorf("the proofValue has %d bytes, not %d", len(sig), ed25519.SignatureSize)
	}
	return sig, nil
}

func bytesCutZ(v string) (string, bool) {
	if len(v) == 0 || v[0] != 'z' {
		return "", false
	}
	return v[1:], true
}

// contextStartsWith: the document's @context (a string or an array) begins with every value
// of the proof's, in order.
func contextStartsWith(doc, proof json.RawMessage) bool {
	list := func(raw json.RawMessage) []json.RawMessage {
		var many []json.RawMessage
		if json.Unmarshal(raw, &many) == nil {
			return many
		}
		if len(raw) == 0 {
			return nil
		}
		return []json.RawMessage{raw}
	}
	d, p := list(doc), list(proof)
	if len(p) > len(d) {
		return false
	}
	for i := range p {
		a, errA := canonical(d[i])
		b, errB := canonical(p[i])
		if errA != nil || errB != nil || !bytes.Equal(a, b) {
			return false
		}
	}
	return true
}
