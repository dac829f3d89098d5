package signed

import (
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/gowebpki/jcs"
	"github.com/mr-tron/base58"
)

// W3C Data Integrity proofs with the eddsa-jcs-2022 cryptosuite (W3C Recommendation "Data
// Integrity EdDSA Cryptosuites v1.0", § 3.3): the signature is Ed25519 over
//
//	SHA-256(JCS(proof options)) ‖ SHA-256(JCS(document without proof))
//
// where the proof options are the proof without proofValue, and JCS is RFC 8785. proofValue
// is the multibase base58btc ("z…") of the 64-byte signature.

// The values of a Parley proof.
const (
	ProofType        = "DataIntegrityProof"
	Cryptosuite      = "eddsa-jcs-2022"
	AssertionMethod  = "assertionMethod"
	createdTimestamp = "2006-01-02T15:04:05Z"
)

// Signer signs JSON documents with one Ed25519 key: a stance's author's in tests and tools, or
// a realm's key on the server.
type Signer struct {
	key ed25519.PrivateKey
	pub ed25519.PublicKey
}

// NewSigner makes the signer of a private key.
func NewSigner(key ed25519.PrivateKey) *Signer {
	return &Signer{key: key, pub: key.Public().(ed25519.PublicKey)}
}

// PublicKey is the signer's public key.
func (s *Signer) PublicKey() ed25519.PublicKey { return s.pub }

// DID is the signer's did:key.
func (s *Signer) DID() string { return DIDKey(s.pub) }

// ProofOptions are the options of a new proof by the signer: DataIntegrityProof,
// eddsa-jcs-2022, created (in UTC, to the second), the signer's verification method and the
// purpose assertionMethod. proofValue is left empty.
func (s *Signer) ProofOptions(created time.Time) *Proof {
	return &Proof{
		Type:               ProofType,
		Cryptosuite:        Cryptosuite,
		Created:            created.UTC().Format(createdTimestamp),
		VerificationMethod: VerificationMethod(s.pub),
		ProofPurpose:       AssertionMethod,
	}
}

// Proof is a DataIntegrityProof as Parley writes it.
type Proof struct {
	Context            json.RawMessage `json:"@context,omitempty"`
	Type               string          `json:"type"`
	Cryptosuite        string          `json:"cryptosuite"`
	Created            string          `json:"created,omitempty"`
	VerificationMethod string          `json:"verificationMethod"`
	ProofPurpose       string          `json:"proofPurpose"`
	ProofValue         string          `json:"proofValue,omitempty"`
}

// Prove signs doc (a JSON object without proof) and answers its proof.
func (s *Signer) Prove(doc []byte, created time.Time) (*Proof, error) {
	fields, err := object(doc)
	if err != nil {
		return nil, err
	}
	if _, has := fields["proof"]; has {
		return nil, errors.New("the document to sign has a proof already")
	}
	opts := s.ProofOptions(created)
	if ctx, has := fields["@context"]; has {
		opts.Context = ctx // § 3.3.1: the proof carries the document's context
	}
	rawOpts, err := json.Marshal(opts)
	if err != nil {
		return nil, err
	}
	data, err := HashData(doc, rawOpts)
	if err != nil {
		return nil, err
	}
	opts.ProofValue = "z" + base58.Encode(ed25519.Sign(s.key, data))
	return opts, nil
}

// ProveDigest signs a document known by its digest alone — the SHA-256 of its JCS form, of a
// document without @context written as a stream (jsonstream) — and answers its proof: the
// same proof Prove makes of the whole document.
func (s *Signer) ProveDigest(docHash []byte, created time.Time) (*Proof, error) {
	if len(docHash) != sha256.Size {
		return nil, fmt.Errorf("a document's digest has %d bytes, not %d", len(docHash), sha256.Size)
	}
	opts := s.ProofOptions(created)
	rawOpts, err := json.Marshal(opts)
	if err != nil {
		return nil, err
	}
	canonOpts, err := jcs.Transform(rawOpts)
	if err != nil {
		return nil, err
	}
	optsHash := sha256.Sum256(canonOpts)
	opts.ProofValue = "z" + base58.Encode(ed25519.Sign(s.key, append(optsHash[:], docHash...)))
	return opts, nil
}

// Sign answers doc (a JSON object without proof) with its proof added, in canonical (JCS)
// form: the one function the server calls to sign a binding, an export or a line.
func (s *Signer) Sign(doc []byte, created time.Time) ([]byte, error) {
	proof, err := s.Prove(doc, created)
	if err != nil {
		return nil, err
	}
	return WithProof(doc, proof)
}

// WithProof answers doc (a JSON object) with proof set as its proof, in canonical form.
func WithProof(doc []byte, proof *Proof) ([]byte, error) {
	fields, err := object(doc)
	if err != nil {
		return nil, err
	}
	if fields["proof"], err = json.Marshal(proof); err != nil {
		return nil, err
	}
	raw, err := json.Marshal(fields)
	if err != nil {
		return nil, err
	}
	return jcs.Transform(raw)
}

// HashData is what an eddsa-jcs-2022 signature covers: SHA-256 of the JCS form of the proof
// options (without proofValue) followed by SHA-256 of the JCS form of the document (without
// proof), 64 bytes.
func HashData(doc, proofOptions []byte) ([]byte, error) {
	docHash, optsHash, err := Hashes(doc, proofOptions)
	if err != nil {
		return nil, err
	}
	return append(optsHash, docHash...), nil
}

// Hashes are the two hashes of HashData: the document's and the proof options'.
func Hashes(doc, proofOptions []byte) (docHash, optsHash []byte, err error) {
	canonDoc, err := jcs.Transform(doc)
	if err != nil {
		return nil, nil, fmt.Errorf("the document is not JSON that JCS can canonicalise: %v", err)
	}
	canonOpts, err := jcs.Transform(proofOptions)
	if err != nil {
		return nil, nil, fmt.Errorf("the proof options are not JSON that JCS can canonicalise: %v", err)
	}
	d, o := sha256.Sum256(canonDoc), sha256.Sum256(canonOpts)
	return d[:], o[:], nil
}

// object reads a JSON object into its members, refusing duplicate keys (which JCS refuses)
// and anything that is not an object.
func object(doc []byte) (map[string]json.RawMessage, error) {
	canon, err := jcs.Transform(doc)
	if err != nil {
		return nil, fmt.Errorf("not JSON that JCS can canonicalise: %v", err)
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(canon, &fields); err != nil || fields == nil {
		return nil, errors.New("not a JSON object")
	}
	return fields, nil
}

// canonical is the JCS form of any JSON value.
func canonical(raw []byte) ([]byte, error) { return jcs.Transform(raw) }

// Canonical is the JCS (RFC 8785) form of a JSON value.
func Canonical(raw []byte) ([]byte, error) { return jcs.Transform(raw) }
