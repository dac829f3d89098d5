package signed_test

import (
	"bytes"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/parleyforum/parley/signed"
)

// w3cSignedJCS is the test vector TestVectors/eddsa-jcs-2022/signedJCS.json of the W3C
// repository w3c/vc-di-eddsa (Data Integrity EdDSA Cryptosuites v1.0), byte for byte.
const w3cSignedJCS = `{
  "@context": [
    "https://www.w3.org/ns/credentials/v2",
    "https://www.w3.org/ns/credentials/examples/v2"
  ],
  "id": "urn:uuid:58172aac-d8ba-11ed-83dd-0b3aef56cc33",
  "type": [
    "VerifiableCredential",
    "AlumniCredential"
  ],
  "name": "Alumni Credential",
  "description": "A minimum viable example of an Alumni Credential.",
  "issuer": "https://vc.example/issuers/5678",
  "validFrom": "2023-01-01T00:00:00Z",
  "credentialSubject": {
    "id": "did:example:abcdefgh",
    "alumniOf": "The School of Examples"
  },
  "proof": {
    "type": "DataIntegrityProof",
    "cryptosuite": "eddsa-jcs-2022",
    "created": "2023-02-24T23:36:38Z",
    "verificationMethod": "https://vc.example/issuers/5678#z6MkrJVnaZkeFzdQyMZu1cgjg7k1pZZ6pvBQ7XJPt4swbTQ2",
    "proofPurpose": "assertionMethod",
    "@context": [
      "https://www.w3.org/ns/credentials/v2",
      "https://www.w3.org/ns/credentials/examples/v2"
    ],
    "proofValue": "z63t83Y53KfzJ5ZosfKTnqfMcKB2dmTrfjSaQjeNNjAD5srBowQfmWqeRb8rRjmeEuCBEsddF9LsVogtuTsijJKh4"
  }
}`

// The same repository's docHashJCS.txt: the hash of the vector's document without its proof.
// (Its proofHashJCS.txt belongs to a version of the vector whose verificationMethod was a
// did:key; the vector above names the issuer's URL, so its proof hash differs.)
const w3cDocHash = "59b7cb6251b8991add1ce0bc83107e3db9dbbab5bd2c28f687db1a03abc92f19"

func TestW3CVectorHolds(t *testing.T) {
	checked, err := signed.Verify([]byte(w3cSignedJCS))
	if err != nil {
		t.Fatalf("the W3C vector does not verify: %v", err)
	}
	if len(checked) != 1 || checked[0].DID != "did:key:z6MkrJVnaZkeFzdQyMZu1cgjg7k1pZZ6pvBQ7XJPt4swbTQ2" || checked[0].FromDID {
		t.Errorf("checked = %+v", checked)
	}
	// The hashes, as the vector's own files give them.
	var doc map[string]json.RawMessage
	if err := json.Unmarshal([]byte(w3cSignedJCS), &doc); err != nil {
		t.Fatal(err)
	}
	var opts map[string]json.RawMessage
	if err := json.Unmarshal(doc["proof"], &opts); err != nil {
		t.Fatal(err)
	}
	delete(doc, "proof")
	delete(opts, "proofValue")
	rawDoc, _ := json.Marshal(doc)
	rawOpts, _ := json.Marshal(opts)
	docHash, _, err := signed.Hashes(rawDoc, rawOpts)
	if err != nil {
		t.Fatal(err)
	}
	if hex.EncodeToString(docHash) != w3cDocHash {
		t.Errorf("document hash %x, want %s", docHash, w3cDocHash)
	}
}

// One character changed anywhere that is signed — a value, a key, the proof's options, its
// value — and the vector no longer holds.
func TestW3CVectorOneCharacterChanged(t *testing.T) {
	cases := []struct{ from, to string }{
		{`"Alumni Credential"`, `"Alumni Credentiak"`},
		{`"The School of Examples"`, `"The School of Examplez"`},
		{`"validFrom": "2023-01-01T00:00:00Z"`, `"validFrom": "2023-01-01T00:00:01Z"`},
		{`"created": "2023-02-24T23:36:38Z"`, `"created": "2023-02-24T23:36:39Z"`},
		{`"proofPurpose": "assertionMethod"`, `"proofPurpose": "assertionMethoe"`},
		{`"alumniOf"`, `"alumniOg"`},
		{`jJKh4"`, `jJKh5"`},
		{`swbTQ2"`, `swbTQ3"`},
	}
	for _, c := range cases {
		if strings.Count(w3cSignedJCS, c.from) != 1 {
			t.Fatalf("%q is not once in the vector", c.from)
		}
		changed := strings.Replace(w3cSignedJCS, c.from, c.to, 1)
		if _, err := signed.Verify([]byte(changed)); err == nil {
			t.Errorf("%s → %s: still verifies", c.from, c.to)
		}
	}
	// White space outside the values is not signed: JCS removes it.
	if _, err := signed.Verify([]byte(strings.ReplaceAll(w3cSignedJCS, "\n  ", "\n\t"))); err != nil {
		t.Errorf("re-indented vector: %v", err)
	}
}

func TestSignAndVerifyRoundTrip(t *testing.T) {
	seed := make([]byte, ed25519.SeedSize)
	seed[0] = 7
	s := signed.NewSigner(ed25519.NewKeyFromSeed(seed))
	doc := []byte(`{"type":"ParleyKeyBinding","realm":"ainotes","identity":"ainotes:bob","key":"did:key:z6Mk","note":"<&>"}`)
	created := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	out, err := s.Sign(doc, created)
	if err != nil {
		t.Fatal(err)
	}
	checked, err := signed.Verify(out)
	if err != nil {
		t.Fatalf("%s: %v", out, err)
	}
	if checked[0].DID != s.DID() || !checked[0].FromDID || checked[0].Created != "2026-12-01T10:00:00Z" {
		t.Errorf("checked %+v", checked[0])
	}
	if !strings.HasPrefix(s.DID(), "did:key:z6Mk") {
		t.Errorf("DID %s", s.DID())
	}
	// Tampered: the document, the proof's options, the proof removed, the key swapped.
	other := signed.NewSigner(ed25519.NewKeyFromSeed(make([]byte, 32)))
	for name, bad := range map[string]string{
		"document":    strings.Replace(string(out), "ainotes:bob", "ainotes:eve", 1),
		"created":     strings.Replace(string(out), "2026-12-01T10:00:00Z", "2026-12-01T10:00:01Z", 1),
		"key swapped": strings.ReplaceAll(string(out), s.DID()[len("did:key:"):], other.DID()[len("did:key:"):]),
		"no proof":    string(doc),
		"other suite": strings.Replace(string(out), "eddsa-jcs-2022", "eddsa-rdfc-2022", 1),
		"duplicate":   strings.Replace(string(out), `{"identity"`, `{"identity":"ainotes:eve","identity"`, 1),
	} {
		if _, err := signed.Verify([]byte(bad)); err == nil {
			t.Errorf("%s: tampered document verifies", name)
		}
	}
	if _, err := s.Sign(out, created); err == nil {
		t.Error("a document with a proof signed again")
	}
}

// Keys of small order, and non-canonical encodings, are refused; an honest key is not.
func TestCheckPublicKey(t *testing.T) {
	honest := ed25519.NewKeyFromSeed(make([]byte, 32)).Public().(ed25519.PublicKey)
	identity := make([]byte, 32)
	identity[0] = 1
	// y = p (2^255 - 19) is the non-canonical encoding of y = 0, a point of order 4.
	nonCanonical, _ := hex.DecodeString("edffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f")
	// y = -1 (order 2), canonically.
	orderTwo, _ := hex.DecodeString("ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f")
	// the honest key with the sign bit of x flipped where x = 0 would be: the identity with
	// its sign bit set, non-canonical.
	negZero := append([]byte{}, identity...)
	negZero[31] |= 0x80
	// The order-8 point of the small-order list of RFC 8032's reference tests.
	orderEight, _ := hex.DecodeString("c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a")
	cases := []struct {
		name string
		key  []byte
		ok   bool
		msg  string
	}{
		{"honest", honest, true, ""},
		{"identity point", identity, false, "small order"},
		{"all zeros", make([]byte, 32), false, "small order"},
		{"order two", orderTwo, false, "small order"},
		{"order eight", orderEight, false, "small order"},
		{"non-canonical y", nonCanonical, false, "canonical"},
		{"identity with sign bit", negZero, false, ""},
		{"31 bytes", honest[:31], false, "a public key has 31 bytes, not 32"},
		{"33 bytes", append(append([]byte{}, honest...), 0), false, "a public key has 33 bytes, not 32"},
	}
	for _, c := range cases {
		err := signed.CheckPublicKey(c.key)
		if (err == nil) != c.ok {
			t.Errorf("%s: err = %v", c.name, err)
			continue
		}
		if err != nil && !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%s: %q does not say %q", c.name, err, c.msg)
		}
	}
}

func TestDIDKey(t *testing.T) {
	// did:key's own example key (W3C CCG did:key spec, Ed25519 test vector "publicKeyMultibase").
	did := "did:key:z6MkiTBz1ymuepAQ4HEHYSF1H8quG5GLVVQR3djdX3mDooWp"
	pub, err := signed.ParseDIDKey(did)
	if err != nil {
		t.Fatal(err)
	}
	if signed.DIDKey(pub) != did {
		t.Errorf("round trip %s", signed.DIDKey(pub))
	}
	if _, err := signed.ParseDIDKey(did + "#z6MkiTBz1ymuepAQ4HEHYSF1H8quG5GLVVQR3djdX3mDooWp"); err != nil {
		t.Errorf("verification method: %v", err)
	}
	for _, bad := range []string{
		did + "#z6MkrJVnaZkeFzdQyMZu1cgjg7k1pZZ6pvBQ7XJPt4swbTQ2", // another key after #
		"did:key:" + did[len("did:key:"):len(did)-1],              // one character short
		"did:web:example.org",
		"did:key:6MkiTBz1ymuepAQ4HEHYSF1H8quG5GLVVQR3djdX3mDooWp", // not multibase z
		"did:key:z0OIl",
	} {
		if _, err := signed.ParseDIDKey(bad); err == nil {
			t.Errorf("%s accepted", bad)
		}
	}
	// The identity point as a did:key is refused like the raw key.
	identity := make([]byte, 32)
	identity[0] = 1
	if _, err := signed.ParseDIDKey(signed.DIDKey(identity)); err == nil || !strings.Contains(err.Error(), "small order") {
		t.Errorf("identity did:key: %v", err)
	}
}

// A proof of a document's digest is the proof of the document: the same bytes signed, and it
// holds when the document carries it.
func TestProveDigestIsProveOfTheDocument(t *testing.T) {
	signer := signed.NewSigner(ed25519.NewKeyFromSeed(bytes.Repeat([]byte{7}, 32)))
	doc := []byte(`{"z":[1,2,{"b":"é\u2028","a":null}],"a":"x"}`)
	created := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	whole, err := signer.Prove(doc, created)
	if err != nil {
		t.Fatal(err)
	}
	canon, err := signed.Canonical(doc)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(canon)
	streamed, err := signer.ProveDigest(sum[:], created)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(streamed, whole) {
		t.Errorf("the digest's proof %+v differs from the document's %+v", streamed, whole)
	}
	secured, err := signed.WithProof(doc, streamed)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := signed.Verify(secured); err != nil {
		t.Errorf("the digest's proof does not hold on the document: %v", err)
	}
	if _, err := signer.ProveDigest(sum[:31], created); err == nil {
		t.Error("a digest of 31 bytes was signed")
	}
}
