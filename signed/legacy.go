package signed

// Version 1 signatures (stances stored before PROTOCOL.md § 14): an Ed25519 signature over
// the JCS form of {at, by, claim, evidence, statement_sha256}. Exports carry them as
// legacy_signature, and verify-export checks them in this form.

import (
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/gowebpki/jcs"
)

// Evidence is one evidence item as it was sent: kind, ref, and note when one was given.
type Evidence struct {
	Kind string  `json:"kind"`
	Ref  string  `json:"ref"`
	Note *string `json:"note,omitempty"`
}

// Payload is what a signature covers: {at, by, claim, evidence, statement_sha256}.
type Payload struct {
	At              string     `json:"at"`
	By              string     `json:"by"`
	Claim           string     `json:"claim"`
	Evidence        []Evidence `json:"evidence"`
	StatementSHA256 string     `json:"statement_sha256"`
}

// NewPayload is the payload of a stance by identity by on claim, whose statement is
// statement, with its evidence as sent and the at of its signature.
func NewPayload(claim, statement string, evidence []Evidence, by, at string) Payload {
	if evidence == nil {
		evidence = []Evidence{}
	}
	return Payload{At: at, By: by, Claim: claim, Evidence: evidence, StatementSHA256: StatementSHA256(statement)}
}

// StatementSHA256 is the lowercase hex SHA-256 of a statement in UTF-8.
func StatementSHA256(statement string) string {
	sum := sha256.Sum256([]byte(statement))
	return hex.EncodeToString(sum[:])
}

// Bytes are the signed bytes: the RFC 8785 (JCS) canonical JSON of the payload.
func (p Payload) Bytes() ([]byte, error) {
	raw, err := json.Marshal(p)
	if err != nil {
		return nil, err
	}
	return jcs.Transform(raw)
}

// Sign signs the payload with key and answers the signature in base64, as a client sent it
// before version 2 (no operation takes one now; tests make stored legacy signatures with it).
func Sign(key ed25519.PrivateKey, p Payload) (string, error) {
	msg, err := p.Bytes()
	if err != nil {
		return "", err
	}
	return base64.StdEncoding.EncodeToString(ed25519.Sign(key, msg)), nil
}

// PublicKey decodes a public key as registered: the standard base64 of its 32 bytes.
func PublicKey(encoded string) (ed25519.PublicKey, error) {
	raw, err := base64.StdEncoding.DecodeString(encoded)
	if err != nil {
		return nil, errors.New("a public key must be standard base64 (RFC 4648, with padding)")
	}
	if err := CheckPublicKey(raw); err != nil {
		return nil, err
	}
	return ed25519.PublicKey(raw), nil
}

// Signature decodes a signature as sent: the standard base64 of its 64 bytes.
func Signature(encoded string) ([]byte, error) {
	raw, err := base64.StdEncoding.DecodeString(encoded)
	if err != nil {
		return nil, errors.New("a signature must be standard base64 (RFC 4648, with padding)")
	}
	if len(raw) != ed25519.SignatureSize {
		return nil, fmt.Errorf("a signature has %d bytes, not %d", len(raw), ed25519.SignatureSize)
	}
	return raw, nil
}

// ErrMismatch: the signature does not hold for the payload and the key.
var ErrMismatch = errors.New("the signature does not match the signed bytes and the key")

// VerifyLegacy checks a version 1 signature (base64) over the payload with a public key (base64): nil when
// it holds, otherwise why not.
func VerifyLegacy(publicKey, signature string, p Payload) error {
	key, err := PublicKey(publicKey)
	if err != nil {
		return err
	}
	sig, err := Signature(signature)
	if err != nil {
		return err
	}
	msg, err := p.Bytes()
	if err != nil {
		return err
	}
	if !ed25519.Verify(key, msg, sig) {
		return ErrMismatch
	}
	return nil
}
