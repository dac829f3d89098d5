package signed

import (
	"bytes"
	"crypto/ed25519"
	"errors"
	"fmt"
	"strings"

	"filippo.io/edwards25519"
	"github.com/mr-tron/base58"
)

// ed25519Multicodec is the multicodec prefix of an Ed25519 public key (0xed, as an unsigned
// varint: 0xed 0x01), which did:key puts before the 32 bytes.
var ed25519Multicodec = []byte{0xed, 0x01}

// CheckPublicKey answers nil when raw is an Ed25519 public key that a signature can be
// checked against: 32 bytes that encode a point canonically, of which eight times (the
// cofactor) is not the identity. A key of small order — the identity point, the all-zero
// key, the other points of order 2, 4 or 8 — lets signatures be made without any private
// key, and a non-canonical encoding lets one key be written two ways; both are refused.
func CheckPublicKey(raw []byte) error {
	if len(raw) != ed25519.PublicKeySize {
		return fmt.Errorf("a public key has %d bytes, not %d", len(raw), ed25519.PublicKeySize)
	}
	p, err := new(edwards25519.Point).SetBytes(raw)
	if err != nil {
		return errors.New("the public key is not a point of Ed25519")
	}
	if !bytes.Equal(p.Bytes(), raw) {
		return errors.New("the public key is not the canonical encoding of its point")
	}
	if new(edwards25519.Point).MultByCofactor(p).Equal(edwards25519.NewIdentityPoint()) == 1 {
		return errors.New("the public key is a point of small order, with which signatures can be made without a private key")
	}
	return nil
}

// DIDKey is the did:key of an Ed25519 public key: "did:key:z" and the base58btc of 0xed 0x01
// followed by the 32 bytes.
func DIDKey(pub ed25519.PublicKey) string {
	return "did:key:" + multibaseKey(pub)
}

// multibaseKey is the multibase (base58btc, "z") of the multicodec key.
func multibaseKey(pub ed25519.PublicKey) string {
	return "z" + base58.Encode(append(append([]byte{}, ed25519Multicodec...), pub...))
}

// VerificationMethod is the verification method of a did:key: the DID, "#" and the key's
// multibase again, as the did:key method defines it.
func VerificationMethod(pub ed25519.PublicKey) string {
	m := multibaseKey(pub)
	return "did:key:" + m + "#" + m
}

// ParseDIDKey reads the Ed25519 public key of a did:key, or of its verification method
// (did:key:z…#z…, whose fragment must repeat the key), and checks it with CheckPublicKey.
func ParseDIDKey(did string) (ed25519.PublicKey, error) {
	rest, ok := strings.CutPrefix(did, "did:key:")
	if !ok {
		return nil, fmt.Errorf("%q is not a did:key", did)
	}
	id, fragment, hasFragment := strings.Cut(rest, "#")
	if hasFragment && fragment != id {
		return nil, fmt.Errorf("the verification method %q names another key after # than before it", did)
	}
	return parseMultikey(did, id)
}

// MethodKey reads the Ed25519 public key a verification method names: a did:key (with or
// without its fragment), or any other URL whose fragment is the key's Multikey
// (https://…#z6Mk…, as the W3C test vectors write it). It answers the key and whether it came
// from a did:key.
func MethodKey(method string) (ed25519.PublicKey, bool, error) {
	if strings.HasPrefix(method, "did:key:") {
		pub, err := ParseDIDKey(method)
		return pub, true, err
	}
	_, fragment, ok := strings.Cut(method, "#")
	if !ok || !strings.HasPrefix(fragment, "z6Mk") {
		return nil, false, fmt.Errorf("the verification method %q is neither a did:key nor a URL whose fragment is an Ed25519 Multikey (z6Mk…)", method)
	}
	pub, err := parseMultikey(method, fragment)
	return pub, false, err
}

// parseMultikey reads the Multikey id (z + base58btc of 0xed 0x01 and 32 bytes) of did.
func parseMultikey(did, id string) (ed25519.PublicKey, error) {
	encoded, ok := strings.CutPrefix(id, "z")
	if !ok {
		return nil, fmt.Errorf("the did:key %q is not base58btc (multibase z)", did)
	}
	raw, err := base58.Decode(encoded)
	if err != nil || len(encoded) == 0 {
		return nil, fmt.Errorf("the did:key %q is not valid base58btc", did)
	}
	if !bytes.HasPrefix(raw, ed25519Multicodec) {
		return nil, fmt.Errorf("the did:key %q is not an Ed25519 key (multicodec 0xed)", did)
	}
	pub := raw[len(ed25519Multicodec):]
	if len(pub) == ed25519.PublicKeySize && multibaseKey(pub) != id {
		return nil, fmt.Errorf("the did:key %q is not the canonical base58btc of its key", did)
	}
	if err := CheckPublicKey(pub); err != nil {
		return nil, fmt.Errorf("the did:key %q: %v", did, err)
	}
	return ed25519.PublicKey(pub), nil
}
