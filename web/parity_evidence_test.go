package web_test

import (
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strings"
	"time"

	"github.com/parleyforum/parley/signed"
)

// The parity cases of the signed profile (§ 13): key registration, and attest and verify
// with a signature, accepted and refused. Artifacts, whose HTTP body is raw bytes rather
// than the tool's JSON, have a parity test of their own (TestArtifactParityOfMCPAndHTTP);
// a key registered again, which HTTP answers 200 where MCP has no status, is TestKeysOverHTTP's.
func evidenceParityCases() []parityCase {
	const proof = `[{"kind":"url","ref":"https://example.org/run/1"}]`
	const statement = "parley listens on 8080"
	keyOf := func(seed byte) (ed25519.PrivateKey, string) {
		priv := ed25519.NewKeyFromSeed([]byte(strings.Repeat(string(rune(seed)), ed25519.SeedSize)))
		return priv, base64.StdEncoding.EncodeToString(priv.Public().(ed25519.PublicKey))
	}
	bobKey, bobPublic := keyOf('b')
	annKey, annPublic := keyOf('a')
	// Each forum registers the same keys in the same order: bob's is key_1, ann's key_2.
	asserted := func(f *forum, th, _ string) {
		f.must(f.do(request{method: http.MethodPut, target: "/v1/keys", token: f.bob, body: `{"public_key":"` + bobPublic + `"}`}), http.StatusCreated)
		f.must(f.do(request{method: http.MethodPut, target: "/v1/keys", token: f.human, body: `{"public_key":"` + annPublic + `"}`}), http.StatusCreated)
		f.must(f.post("/v1/claims", f.alice, `{"thread":"`+th+`","statement":"`+statement+`","evidence":`+proof+`}`), http.StatusCreated)
	}
	supported := func(f *forum, th, msg string) {
		asserted(f, th, msg)
		f.must(f.post("/v1/claims/cl_1/attest", f.bob, `{"evidence":`+proof+`}`), http.StatusOK)
	}
	var evidence []signed.Evidence
	_ = json.Unmarshal([]byte(proof), &evidence)
	signature := func(priv ed25519.PrivateKey, key, by string, items []signed.Evidence) string {
		at := time.Now().UTC().Format(time.RFC3339)
		sig, err := signed.Sign(priv, signed.NewPayload("cl_1", statement, items, by, at))
		if err != nil {
			panic(err)
		}
		return `{"key":"` + key + `","at":"` + at + `","sig":"` + sig + `"}`
	}
	// Signed once, so that both forums hold the same signature.
	bobsSignature := signature(bobKey, "key_1", "ainotes:bob", evidence)
	return []parityCase{
		{name: "signed: register a key", as: "alice", tool: "key_register", args: `{"public_key":"` + bobPublic + `"}`, want: "ok"},
		{name: "signed: a key of 31 bytes", as: "alice", tool: "key_register", args: `{"public_key":"` + base64.StdEncoding.EncodeToString(make([]byte, 31)) + `"}`, want: "invalid_body"},
		{name: "signed: a key without a token", tool: "key_register", args: `{"public_key":"` + bobPublic + `"}`, want: "unauthenticated"},
		{name: "signed: a key by a reader", as: "reader", tool: "key_register", args: `{"public_key":"` + bobPublic + `"}`, want: "token_right_missing"},
		{name: "signed: a signed attestation", as: "bob", prepare: asserted, tool: "claim_attest",
			args: `{"claim":"cl_1","evidence":` + proof + `,"signature":` + signature(bobKey, "key_1", "ainotes:bob", evidence) + `}`, want: "ok"},
		{name: "signed: a signed verification", as: "human", prepare: supported, tool: "claim_verify",
			args: `{"claim":"cl_1","signature":` + signature(annKey, "key_2", "human:ann", nil) + `}`, want: "ok"},
		{name: "signed: another's key", as: "bob", prepare: asserted, tool: "claim_attest",
			args: `{"claim":"cl_1","evidence":` + proof + `,"signature":` + signature(annKey, "key_2", "ainotes:bob", evidence) + `}`, want: "invalid_body"},
		{name: "signed: a signature over other evidence", as: "bob", prepare: asserted, tool: "claim_attest",
			args: `{"claim":"cl_1","evidence":` + proof + `,"signature":` + signature(bobKey, "key_1", "ainotes:bob", nil) + `}`, want: "invalid_body"},
		{name: "signed: a claim read with its signature", as: "reader", tool: "claim_read", args: `{"claim":"cl_1"}`, want: "ok",
			prepare: func(f *forum, th, msg string) {
				asserted(f, th, msg)
				f.must(f.post("/v1/claims/cl_1/attest", f.bob, `{"evidence":`+proof+`,"signature":`+bobsSignature+`}`), http.StatusOK)
			}},
	}
}
