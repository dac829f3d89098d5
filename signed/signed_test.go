package signed_test

import (
	"crypto/ed25519"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"strings"
	"testing"

	"github.com/gowebpki/jcs"

	"github.com/parleyforum/parley/signed"
)

// RFC 8785's own examples (§ 3.2.2 and § 3.2.3), through the canonicalizer the payload uses.
func TestCanonicalJSONOfTheRFC(t *testing.T) {
	cases := []struct{ name, in, want string }{
		{"3.2.2 sample", `{
  "numbers": [333333333.33333329, 1E30, 4.50, 2e-3, 0.000000000000000000000000001],
  "string": "\u20ac$\u000F\u000aA'\u0042\u0022\u005c\\\"\/",
  "literals": [null, true, false]
}`, `{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],"string":"€$\u000f\nA'B\"\\\\\"/"}`},
		{"3.2.3 sorting", `{
  "\u20ac": "Euro Sign",
  "\r": "Carriage Return",
  "\ufb33": "Hebrew Letter Dalet With Dagesh",
  "1": "One",
  "\ud83d\ude00": "Emoji: Grinning Face",
  "\u0080": "Control",
  "\u00f6": "Latin Small Letter O With Diaeresis"
}`, "{\"\\r\":\"Carriage Return\",\"1\":\"One\",\"\u0080\":\"Control\",\"ö\":\"Latin Small Letter O With Diaeresis\",\"€\":\"Euro Sign\",\"😀\":\"Emoji: Grinning Face\",\"\ufb33\":\"Hebrew Letter Dalet With Dagesh\"}"},
	}
	for _, c := range cases {
		got, err := jcs.Transform([]byte(c.in))
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if string(got) != c.want {
			t.Errorf("%s:\n got %s\nwant %s", c.name, got, c.want)
		}
	}
}

// The signed bytes of one payload, to the byte: keys in order, no white space, the note only
// where one was given, and <, > and & as they are (encoding/json would escape them).
func TestPayloadBytes(t *testing.T) {
	note := "the log <of run 7> & more"
	p := signed.NewPayload("cl_7", "parley serve listens on 8080", []signed.Evidence{
		{Kind: "artifact", Ref: "sha256:" + hex.EncodeToString(make([]byte, 32)), Note: &note},
		{Kind: "url", Ref: "https://example.org/run/7"},
	}, "ainotes:bob", "2026-12-01T16:00:00Z")
	got, err := p.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	want := `{"at":"2026-12-01T16:00:00Z","by":"ainotes:bob","claim":"cl_7","evidence":[{"kind":"artifact","note":"the log <of run 7> & more","ref":"sha256:0000000000000000000000000000000000000000000000000000000000000000"},{"kind":"url","ref":"https://example.org/run/7"}],"statement_sha256":"` + signed.StatementSHA256("parley serve listens on 8080") + `"}`
	if string(got) != want {
		t.Errorf("signed bytes\n got %s\nwant %s", got, want)
	}
	empty, _ := signed.NewPayload("cl_1", "s", nil, "human:ann", "2026-12-01T16:00:00Z").Bytes()
	if want := `"evidence":[]`; !strings.Contains(string(empty), want) {
		t.Errorf("a payload without evidence reads %s, want %s in it", empty, want)
	}
	if h := signed.StatementSHA256("abc"); h != "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad" {
		t.Errorf("sha256 of abc is %s", h)
	}
}

// A signature holds for its payload and key, and for nothing else.
func TestVerify(t *testing.T) {
	// RFC 8032 § 7.1, test 1: a key anyone can recompute.
	seed, _ := hex.DecodeString("9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60")
	priv := ed25519.NewKeyFromSeed(seed)
	pub := base64.StdEncoding.EncodeToString(priv.Public().(ed25519.PublicKey))
	other := base64.StdEncoding.EncodeToString(ed25519.NewKeyFromSeed(make([]byte, 32)).Public().(ed25519.PublicKey))
	p := signed.NewPayload("cl_1", "the build passes", []signed.Evidence{{Kind: "log", Ref: "PASS"}}, "ainotes:bob", "2026-12-01T16:00:00Z")
	sig, err := signed.Sign(priv, p)
	if err != nil {
		t.Fatal(err)
	}
	if err := signed.VerifyLegacy(pub, sig, p); err != nil {
		t.Fatalf("a good signature: %v", err)
	}
	changed := func(f func(*signed.Payload)) signed.Payload {
		q := p
		q.Evidence = append([]signed.Evidence{}, p.Evidence...)
		f(&q)
		return q
	}
	cases := []struct {
		name     string
		key, sig string
		payload  signed.Payload
		mismatch bool
	}{
		{"another statement", pub, sig, changed(func(q *signed.Payload) { q.StatementSHA256 = signed.StatementSHA256("the build fails") }), true},
		{"another signer", pub, sig, changed(func(q *signed.Payload) { q.By = "ainotes:eve" }), true},
		{"another claim", pub, sig, changed(func(q *signed.Payload) { q.Claim = "cl_2" }), true},
		{"another time", pub, sig, changed(func(q *signed.Payload) { q.At = "2026-12-01T16:00:01Z" }), true},
		{"other evidence", pub, sig, changed(func(q *signed.Payload) { q.Evidence[0].Ref = "FAIL" }), true},
		{"another key", other, sig, p, true},
		{"a key not base64", "not base64!", sig, p, false},
		{"a key of 31 bytes", base64.StdEncoding.EncodeToString(make([]byte, 31)), sig, p, false},
		{"a signature of 63 bytes", pub, base64.StdEncoding.EncodeToString(make([]byte, 63)), p, false},
	}
	for _, c := range cases {
		err := signed.VerifyLegacy(c.key, c.sig, c.payload)
		if err == nil {
			t.Errorf("%s: the signature holds", c.name)
		} else if errors.Is(err, signed.ErrMismatch) != c.mismatch {
			t.Errorf("%s: %v", c.name, err)
		}
	}
}
