package protocol_test

import (
	"crypto/ed25519"
	"encoding/hex"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/parleyforum/parley/protocol"
	"github.com/parleyforum/parley/signed"
)

// The worked example of docs/dialectic.md ("A worked example, to the byte") is what the code
// makes: the key's did, the JCS forms of the document and the proof options, both hashes,
// the signature and the proofValue, each found in the document as written; and the proof
// holds over the document the server rebuilds.
func TestSignedStanceWorkedExampleInTheDocs(t *testing.T) {
	text, err := os.ReadFile("../docs/dialectic.md")
	if err != nil {
		t.Fatal(err)
	}
	seed, _ := hex.DecodeString("0102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f20")
	signer := signed.NewSigner(ed25519.NewKeyFromSeed(seed))
	const statement = "parley serve listens on 8080"
	doc := protocol.StanceDocument("attest", "ainotes", "cl_12", statement, "ainotes:bob",
		[]protocol.Evidence{{Kind: "log", Ref: "curl -s localhost:8080/healthz → ok"}}, ptr("ran it twice"), nil)
	raw, _ := json.Marshal(doc)
	created := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	proof, err := signer.Prove(raw, created)
	if err != nil {
		t.Fatal(err)
	}
	opts := *proof
	opts.ProofValue = ""
	rawOpts, _ := json.Marshal(opts)
	canonDoc, _ := signed.Canonical(raw)
	canonOpts, _ := signed.Canonical(rawOpts)
	docHash, optsHash, err := signed.Hashes(raw, rawOpts)
	if err != nil {
		t.Fatal(err)
	}
	data, _ := signed.HashData(raw, rawOpts)
	sig := ed25519.Sign(ed25519.NewKeyFromSeed(seed), data)
	for what, want := range map[string]string{
		"the did":                     signer.DID(),
		"the document's JCS form":     string(canonDoc),
		"the proof options' JCS form": string(canonOpts),
		"the proof options' SHA-256":  hex.EncodeToString(optsHash),
		"the document's SHA-256":      hex.EncodeToString(docHash),
		"the signature":               hex.EncodeToString(sig),
		"the proofValue":              proof.ProofValue,
		"the statement's SHA-256":     signed.StatementSHA256(statement),
	} {
		if !strings.Contains(string(text), want) {
			t.Errorf("docs/dialectic.md does not show %s: %s", what, want)
		}
	}
	secured, _ := signed.WithProof(raw, proof)
	if _, err := signed.Verify(secured); err != nil {
		t.Errorf("the worked example's proof does not hold: %v", err)
	}
}
