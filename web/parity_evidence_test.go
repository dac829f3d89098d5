package web_test

import (
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strings"
	"time"

	"github.com/parleyforum/parley/protocol"
	"github.com/parleyforum/parley/signed"
	"github.com/parleyforum/parley/storage/storagetest"
)

// The parity cases of the signed profile (§ 14): key registration; attest, refute and verify
// with a proof, accepted and refused; a version 1 signature refused on each; and a stance
// stored with one before version 2 read back. Artifacts, whose HTTP body is raw bytes rather
// than the tool's JSON, have a parity test of their own (TestArtifactParityOfMCPAndHTTP); a
// key registered again, which HTTP answers 200 where MCP has no status, is TestKeysOverHTTP's.
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
	var evidence []protocol.Evidence
	_ = json.Unmarshal([]byte(proof), &evidence)
	// Signed once, at one time, so that both forums are sent the same proof.
	now := time.Now()
	stanceProof := func(priv ed25519.PrivateKey, stance, by string, items []protocol.Evidence, body *string) string {
		doc, err := json.Marshal(protocol.StanceDocument(stance, protocol.DefaultRealm, "cl_1", statement, by, items, nil, body))
		if err != nil {
			panic(err)
		}
		p, err := signed.NewSigner(priv).Prove(doc, now)
		if err != nil {
			panic(err)
		}
		raw, _ := json.Marshal(p)
		return string(raw)
	}
	// A version 1 signature that held before version 2, over the same stance.
	legacy := func(priv ed25519.PrivateKey, key, by string, items []protocol.Evidence) string {
		at := now.UTC().Format(time.RFC3339)
		payload := make([]signed.Evidence, len(items))
		for i, e := range items {
			payload[i] = signed.Evidence{Kind: e.Kind, Ref: e.Ref, Note: e.Note}
		}
		sig, err := signed.Sign(priv, signed.NewPayload("cl_1", statement, payload, by, at))
		if err != nil {
			panic(err)
		}
		return `{"key":"` + key + `","at":"` + at + `","sig":"` + sig + `"}`
	}
	body := "8081 since 1.2"
	return []parityCase{
		{name: "signed: register a key", as: "alice", tool: "key_register", args: `{"public_key":"` + bobPublic + `"}`, want: "ok"},
		{name: "signed: a key of 31 bytes", as: "alice", tool: "key_register", args: `{"public_key":"` + base64.StdEncoding.EncodeToString(make([]byte, 31)) + `"}`, want: "invalid_body"},
		{name: "signed: a key without a token", tool: "key_register", args: `{"public_key":"` + bobPublic + `"}`, want: "unauthenticated"},
		{name: "signed: a key by a reader", as: "reader", tool: "key_register", args: `{"public_key":"` + bobPublic + `"}`, want: "token_right_missing"},
		{name: "signed: a signed attestation", as: "bob", prepare: asserted, tool: "claim_attest",
			args: `{"claim":"cl_1","evidence":` + proof + `,"proof":` + stanceProof(bobKey, "attest", "ainotes:bob", evidence, nil) + `}`, want: "ok"},
		{name: "signed: a signed refutation", as: "bob", prepare: asserted, tool: "claim_refute",
			args: `{"claim":"cl_1","evidence":` + proof + `,"body":"` + body + `","proof":` + stanceProof(bobKey, "refute", "ainotes:bob", evidence, &body) + `}`, want: "ok"},
		{name: "signed: a signed verification", as: "human", prepare: supported, tool: "claim_verify",
			args: `{"claim":"cl_1","proof":` + stanceProof(annKey, "verify", "human:ann", nil, nil) + `}`, want: "ok"},
		{name: "signed: another's key", as: "bob", prepare: asserted, tool: "claim_attest",
			args: `{"claim":"cl_1","evidence":` + proof + `,"proof":` + stanceProof(annKey, "attest", "ainotes:bob", evidence, nil) + `}`, want: "invalid_body"},
		{name: "signed: a proof over other evidence", as: "bob", prepare: asserted, tool: "claim_attest",
			args: `{"claim":"cl_1","evidence":` + proof + `,"proof":` + stanceProof(bobKey, "attest", "ainotes:bob", nil, nil) + `}`, want: "invalid_body"},
		{name: "signed: a version 1 signature on an attestation", as: "bob", prepare: asserted, tool: "claim_attest",
			args: `{"claim":"cl_1","evidence":` + proof + `,"signature":` + legacy(bobKey, "key_1", "ainotes:bob", evidence) + `}`, want: "invalid_body"},
		{name: "signed: a version 1 signature on a refutation", as: "bob", prepare: asserted, tool: "claim_refute",
			args: `{"claim":"cl_1","evidence":` + proof + `,"body":"` + body + `","signature":` + legacy(bobKey, "key_1", "ainotes:bob", evidence) + `}`, want: "invalid_body"},
		{name: "signed: a version 1 signature on a verification", as: "human", prepare: supported, tool: "claim_verify",
			args: `{"claim":"cl_1","signature":` + legacy(annKey, "key_2", "human:ann", nil) + `}`, want: "invalid_body"},
		{name: "signed: a claim read with its version 1 signature", as: "reader", tool: "claim_read", args: `{"claim":"cl_1"}`, want: "ok",
			prepare: func(f *forum, th, msg string) {
				supported(f, th, msg) // bob's attestation is att_1
				storagetest.SignLegacy(f.t, f.db, "att_1", "key_1", bobKey, now)
			}},
	}
}
