package main

import (
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/parleyforum/parley/protocol"
	"github.com/parleyforum/parley/storage"
	"github.com/parleyforum/parley/storage/storagetest"
)

// parley verify-export checks every signature of an export without the server, in each
// format that carries them, and names the one that a tampered export breaks.
func TestVerifyExport(t *testing.T) {
	eachKind(t, func(t *testing.T, url string) {
		attestation, verification := signedForum(t, url)
		dir := t.TempDir()
		exported := map[string]string{}
		for _, format := range []string{"json", "graphml", "aif"} {
			doc := parley(t, "export", "--format", format, "--db", url).ok(t, "export "+format).stdout
			exported[format] = filepath.Join(dir, "forum."+format)
			if err := os.WriteFile(exported[format], []byte(doc), 0o600); err != nil {
				t.Fatal(err)
			}
			out := parley(t, "verify-export", exported[format]).ok(t, "verify-export of the "+format+" export").stdout
			if !strings.Contains(out, "ok   export proof of realm ainotes") ||
				!strings.Contains(out, "ok   legacy_signature of "+attestation+" by ainotes:bob on cl_1, key_1") ||
				!strings.Contains(out, "ok   legacy_signature of "+verification+" by ainotes:vera on cl_1, key_2") ||
				!strings.Contains(out, "3 proofs hold, 0 fail, ") {
				t.Errorf("verify-export of the %s export printed:\n%s", format, out)
			}
		}

		// The dataset (JSON Lines): its order, hash and counts, the export line's proof, both
		// keys' bindings and both version 1 signatures hold; Carol's attestation is unsigned.
		exported["jsonl"] = filepath.Join(dir, "forum.jsonl")
		dataset := parley(t, "export", "--format", "jsonl", "--db", url).ok(t, "export jsonl").stdout
		if err := os.WriteFile(exported["jsonl"], []byte(dataset), 0o600); err != nil {
			t.Fatal(err)
		}
		out := parley(t, "verify-export", exported["jsonl"]).ok(t, "verify-export of the dataset").stdout
		for _, want := range []string{"ok   order of the ", "ok   export proof of realm ainotes", "ok   sha256 of the lines before the export line",
			"ok   counts of the lines", "ok   binding of key_1", "ok   binding of key_2", "ok   legacy_signature of " + attestation + " by ainotes:bob on cl_1, key_1",
			"ok   legacy_signature of " + verification + " by ainotes:vera on cl_1, key_2", "8 proofs hold, 0 fail, 1 stances unsigned"} {
			if !strings.Contains(out, want) {
				t.Errorf("verify-export of the dataset lacks %q:\n%s", want, out)
			}
		}
		truncated := filepath.Join(dir, "truncated.jsonl")
		os.WriteFile(truncated, []byte(dataset[:strings.LastIndex(strings.TrimSuffix(dataset, "\n"), "\n")+1]), 0o600)
		if r := parley(t, "verify-export", truncated); !strings.Contains(r.stdout, "FAIL export line: the dataset has no export line") {
			t.Errorf("verify-export of a dataset without its last line printed:\n%s", r.stdout)
		} else {
			r.fails(t, "verify-export of a truncated dataset", exitRuntime, "proofs do not hold")
		}

		// Bob's evidence is rewritten after he signed it: his signature no longer holds, Vera's does.
		for format, file := range exported {
			doc := readBack(t, file)
			tampered := strings.Replace(string(doc), "go test ./... passes", "go test ./... fails", 1)
			if tampered == string(doc) {
				t.Fatalf("the %s export does not hold bob's evidence:\n%s", format, doc)
			}
			path := filepath.Join(dir, "tampered."+format)
			if err := os.WriteFile(path, []byte(tampered), 0o600); err != nil {
				t.Fatal(err)
			}
			r := parley(t, "verify-export", path)
			r.fails(t, "verify-export of a tampered "+format+" export", exitRuntime, "proofs do not hold")
			if !strings.Contains(r.stdout, "FAIL legacy_signature of "+attestation+" by ainotes:bob") || !strings.Contains(r.stdout, "ok   legacy_signature of "+verification) {
				t.Errorf("verify-export of a tampered %s export printed:\n%s", format, r.stdout)
			}
		}
		// Bob's evidence rewritten only where the export's claims hold it, after the graph.
		exportJSON := string(readBack(t, exported["json"]))
		last := strings.LastIndex(exportJSON, "go test ./... passes")
		claimsOnly := filepath.Join(dir, "claims-only.json")
		os.WriteFile(claimsOnly, []byte(exportJSON[:last]+"go test ./... fails"+exportJSON[last+len("go test ./... passes"):]), 0o600)
		r := parley(t, "verify-export", claimsOnly)
		r.fails(t, "verify-export of an export whose claims alone were changed", exitRuntime, "proofs do not hold")
		if !strings.Contains(r.stdout, "FAIL legacy_signature of "+attestation+" by ainotes:bob on cl_1, key_1") || !strings.Contains(r.stdout, "differ on "+attestation) {
			t.Errorf("verify-export of an export whose claims alone were changed printed:\n%s", r.stdout)
		}
		// The claim's statement changed: both signatures fail.
		restated := filepath.Join(dir, "restated.json")
		os.WriteFile(restated, []byte(strings.ReplaceAll(exportJSON, "the build passes on main", "the build fails on main")), 0o600)
		parley(t, "verify-export", restated).fails(t, "verify-export of a restated claim", exitRuntime, "proofs do not hold")

		dot := filepath.Join(dir, "forum.dot")
		os.WriteFile(dot, []byte(parley(t, "export", "--format", "dot", "--db", url).ok(t, "export dot").stdout), 0o600)
		parley(t, "verify-export", dot).fails(t, "verify-export of DOT", exitRuntime, "carries no proofs")
	})
	parley(t, "verify-export").fails(t, "verify-export without a file", exitUsage, "FILE")
	parley(t, "verify-export", "/nonexistent/forum.json").fails(t, "verify-export of a missing file", exitRuntime, "no such file")
}

// signedForum fills a fresh database: Alice's claim, attested by Bob and verified by Vera,
// each with a version 1 signature by a registered key, and attested by Carol unsigned. No
// operation takes a version 1 signature any more: the two are written into the stances' rows
// as a forum before version 2 of the signed profile stored them, so that exports and
// verify-export are checked on such stances (legacy_signature).
func signedForum(t *testing.T, url string) (attestation, verification string) {
	t.Helper()
	ctx := context.Background()
	svc := migratedService(t, url)
	db, err := storage.Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	agent := func(handle string, rights ...protocol.Right) *protocol.Actor {
		r := protocol.Rights{protocol.RightRead: true, protocol.RightWrite: true}
		for _, right := range rights {
			r[right] = true
		}
		return &protocol.Actor{Identity: "ainotes:" + handle, Rights: r}
	}
	alice, bob, carol, vera := agent("alice"), agent("bob"), agent("carol"), agent("vera", protocol.RightVerify)
	must := mustFor(t)
	res, err := svc.Send(ctx, alice, []byte(`{"kind":"ask","body":"Does the build pass?"}`))
	must(res, err)
	c, err := svc.Assert(ctx, alice, []byte(`{"thread":"`+res.Thread.ID+`","statement":"the build passes on main","evidence":[{"kind":"log","ref":"PASS"}]}`))
	must(c, err)
	sign := func(a *protocol.Actor, seed byte, stance string) {
		priv := ed25519.NewKeyFromSeed([]byte(strings.Repeat(string(rune(seed)), ed25519.SeedSize)))
		key, err := svc.RegisterKey(ctx, a, []byte(`{"public_key":"`+base64.StdEncoding.EncodeToString(priv.Public().(ed25519.PublicKey))+`"}`))
		must(key, err)
		storagetest.SignLegacy(t, db, stance, key.Key.ID, priv, time.Now())
	}
	attested, err := svc.Attest(ctx, bob, []byte(`{"claim":"`+c.Claim.ID+`","evidence":[{"kind":"reproducer","ref":"make test","note":"go test ./... passes"}]}`))
	must(attested, err)
	sign(bob, 'b', attested.Claim.Attestations[0].ID)
	must(svc.Attest(ctx, carol, []byte(`{"claim":"`+c.Claim.ID+`","evidence":[{"kind":"log","ref":"PASS too"}]}`)))
	verified, err := svc.Verify(ctx, vera, []byte(`{"claim":"`+c.Claim.ID+`"}`))
	must(verified, err)
	sign(vera, 'v', verified.Claim.Verifications[0].ID)
	return attested.Claim.Attestations[0].ID, verified.Claim.Verifications[0].ID
}

// readBack reads a file the test wrote.
func readBack(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// verify-export checks any eddsa-jcs-2022 document with a did:key-style verification method:
// the W3C test vector holds, and one character changed fails.
func TestVerifyExportOfTheW3CVector(t *testing.T) {
	// TestVectors/eddsa-jcs-2022/signedJCS.json of w3c/vc-di-eddsa (Data Integrity EdDSA
	// Cryptosuites v1.0), its members unchanged, written on one line.
	const vector = `{"@context":["https://www.w3.org/ns/credentials/v2","https://www.w3.org/ns/credentials/examples/v2"],"id":"urn:uuid:58172aac-d8ba-11ed-83dd-0b3aef56cc33","type":["VerifiableCredential","AlumniCredential"],"name":"Alumni Credential","description":"A minimum viable example of an Alumni Credential.","issuer":"https://vc.example/issuers/5678","validFrom":"2023-01-01T00:00:00Z","credentialSubject":{"id":"did:example:abcdefgh","alumniOf":"The School of Examples"},"proof":{"type":"DataIntegrityProof","cryptosuite":"eddsa-jcs-2022","created":"2023-02-24T23:36:38Z","verificationMethod":"https://vc.example/issuers/5678#z6MkrJVnaZkeFzdQyMZu1cgjg7k1pZZ6pvBQ7XJPt4swbTQ2","proofPurpose":"assertionMethod","@context":["https://www.w3.org/ns/credentials/v2","https://www.w3.org/ns/credentials/examples/v2"],"proofValue":"z63t83Y53KfzJ5ZosfKTnqfMcKB2dmTrfjSaQjeNNjAD5srBowQfmWqeRb8rRjmeEuCBEsddF9LsVogtuTsijJKh4"}}`
	dir := t.TempDir()
	good, bad := filepath.Join(dir, "signedJCS.json"), filepath.Join(dir, "changed.json")
	os.WriteFile(good, []byte(vector), 0o600)
	os.WriteFile(bad, []byte(strings.Replace(vector, "Examples", "Exampler", 1)), 0o600)
	out := parley(t, "verify-export", good).ok(t, "verify-export of the W3C vector").stdout
	if !strings.Contains(out, "ok   document proof by https://vc.example/issuers/5678#z6Mk") || !strings.Contains(out, "1 proofs hold, 0 fail") {
		t.Errorf("verify-export of the W3C vector printed:\n%s", out)
	}
	parley(t, "verify-export", bad).fails(t, "verify-export of the changed vector", exitRuntime, "1 of 1 proofs do not hold")
}
