package main

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/parleyforum/parley/protocol"
	"github.com/parleyforum/parley/signed"
	"github.com/parleyforum/parley/storage"
	"github.com/parleyforum/parley/storage/storagetest"
)

// Two real instances of different realms, on each database: alpha's claim, attested by bob
// with a signed stance (a v2 document), is exported, carried into beta through POST
// /v1/imports, shown there as alpha's, and carried on by beta's own export, whose
// verify-export still checks bob's proof. Importing again writes nothing.
func TestImportBetweenRealms(t *testing.T) {
	eachKind(t, func(t *testing.T, urlA string) {
		urlB := storagetest2URL(t, urlA)
		dir := t.TempDir()

		// Alpha: alice asserts, bob attests with a proof by his registered key.
		aliceToken := tokenFor(t, urlA, "alpha", "alice")
		bobToken := tokenFor(t, urlA, "alpha", "bob")
		a := startServe(t, "--db", urlA, "--realm", "alpha")
		claimID, statement := assertedClaim(t, a.base, aliceToken)
		bob := ed25519.NewKeyFromSeed(bytes.Repeat([]byte{'b'}, ed25519.SeedSize))
		signedAttest(t, a.base, bobToken, bob, "alpha", claimID, statement)

		exportA := filepath.Join(dir, "alpha.json")
		writeFile(t, exportA, parley(t, "export", "--format", "json", "--db", urlA, "--realm", "alpha").ok(t, "alpha's export").stdout)
		out := parley(t, "verify-export", exportA).ok(t, "verify-export of alpha's export").stdout
		if !strings.Contains(out, "ok   stance att_1: attest by alpha:bob on "+claimID) {
			t.Fatalf("verify-export of alpha's export printed:\n%s", out)
		}
		didA := strings.TrimSpace(parley(t, "realm-key", "--db", urlA).ok(t, "alpha's realm key").stdout)

		// Beta trusts alpha; its administrator imports alpha's export.
		invocation{args: []string{"user", "add", "--name", "root", "--admin", "--password-stdin", "--db", urlB}, stdin: "long enough\n"}.run(t).ok(t, "beta's administrator")
		rootToken := decodeCreated(t, parley(t, "token", "create", "--human", "root", "--json", "--db", urlB).ok(t, "root's token").stdout).Token
		b := startServe(t, "--db", urlB, "--realm", "beta", "--trust-realm", "alpha="+didA, "--public-read", "true")
		body := readBack(t, exportA)
		status, res := call(t, b.base, rootToken, http.MethodPost, "/v1/imports", body)
		if status != http.StatusCreated {
			t.Fatalf("the import answered %d %v", status, res)
		}
		var imported protocol.ImportResult
		remarshal(t, res, &imported)
		if len(imported.Claims) != 1 || imported.Claims[0].Origin.Realm != "alpha" || imported.Claims[0].Origin.Claim != claimID ||
			imported.Stances != 1 || imported.Keys != 1 || len(imported.Threads) != 1 {
			t.Fatalf("the import answered %+v", imported)
		}
		local := imported.Claims[0].ID
		status, res = call(t, b.base, rootToken, http.MethodGet, "/v1/claims/"+local, nil)
		var read protocol.ClaimResult
		remarshal(t, res, &read)
		c := read.Claim
		if status != http.StatusOK || c.Origin == nil || c.Origin.Realm != "alpha" || c.Origin.Claim != claimID ||
			c.AssertedBy.Identity != "alpha:alice" || c.State != protocol.ClaimSupported || c.Confirmed ||
			len(c.Attestations) != 1 || c.Attestations[0].By.Identity != "alpha:bob" || c.Attestations[0].Document == nil {
			t.Fatalf("beta reads the imported claim as %d %+v", status, c)
		}
		// The pages show alpha's identities as foreign, naming their realm.
		code, page := get(t, b.base+"/threads/"+imported.Threads[0]+"?lang=en")
		if code != http.StatusOK || !strings.Contains(page, `data-foreign-realm="alpha"`) || !strings.Contains(page, "from alpha") {
			t.Errorf("beta's thread page (%d) does not mark alpha's identities:\n%s", code, page)
		}

		// The same export again: nothing new.
		status, res = call(t, b.base, rootToken, http.MethodPost, "/v1/imports", body)
		remarshal(t, res, &imported)
		if status != http.StatusOK || imported.Known != 1 || imported.Stances != 0 || imported.Claims[0].ID != local {
			t.Fatalf("the second import answered %d %+v", status, imported)
		}
		// A local agent may attest the imported claim as any claim.
		carol := tokenFor(t, urlB, "beta", "carol")
		status, res = call(t, b.base, carol, http.MethodPost, "/v1/claims/"+local+"/attest",
			[]byte(`{"evidence":[{"kind":"log","ref":"PASS on beta too"}]}`))
		if status != http.StatusOK {
			t.Fatalf("carol's attestation of the imported claim answered %d %v", status, res)
		}

		// Beta's own export carries bob's proof and alpha's binding on; both exports verify.
		exportB := filepath.Join(dir, "beta.json")
		writeFile(t, exportB, parley(t, "export", "--format", "json", "--db", urlB, "--realm", "beta").ok(t, "beta's export").stdout)
		out = parley(t, "verify-export", exportB).ok(t, "verify-export of beta's export").stdout
		if !strings.Contains(out, "ok   export proof of realm beta") || !strings.Contains(out, "to alpha:bob") ||
			!strings.Contains(out, "attest by alpha:bob on "+claimID) || !strings.Contains(out, "0 fail") {
			t.Errorf("verify-export of beta's export printed:\n%s", out)
		}
		for _, format := range []string{"graphml", "aif"} {
			file := filepath.Join(dir, "beta."+format)
			writeFile(t, file, parley(t, "export", "--format", format, "--db", urlB, "--realm", "beta").ok(t, "beta's "+format).stdout)
			parley(t, "verify-export", file).ok(t, "verify-export of beta's "+format)
		}
		// Beta's dataset too: the claim line keeps alpha's origin, the export line names
		// alpha's key, and bob's proof and binding hold.
		datasetB := filepath.Join(dir, "beta.jsonl")
		writeFile(t, datasetB, parley(t, "export", "--format", "jsonl", "--db", urlB, "--realm", "beta").ok(t, "beta's jsonl").stdout)
		out = parley(t, "verify-export", datasetB).ok(t, "verify-export of beta's jsonl").stdout
		if !strings.Contains(out, "attest by alpha:bob on "+claimID) || !strings.Contains(out, "to alpha:bob") || !strings.Contains(out, "0 fail") {
			t.Errorf("verify-export of beta's jsonl printed:\n%s", out)
		}
		parley(t, "verify-export", exportA).ok(t, "verify-export of alpha's export, again")

		// Gamma trusts beta but not alpha: beta's export names alpha's key for bob's
		// binding, so it is refused; trusting both, it lands, bob's proof still holding.
		urlC := storagetest2URL(t, urlA)
		didB := strings.TrimSpace(parley(t, "realm-key", "--db", urlB).ok(t, "beta's realm key").stdout)
		parley(t, "import", exportB, "--db", urlC, "--realm", "gamma", "--trust-realm", "beta="+didB).
			fails(t, "gamma's import without trusting alpha", exitRuntime, "realm alpha is not trusted")
		got := parley(t, "import", exportB, "--db", urlC, "--realm", "gamma", "--trust-realm", "beta="+didB, "--trust-realm", "alpha="+didA).
			ok(t, "gamma's import").stdout
		if !strings.Contains(got, "imported from realm beta") || !strings.Contains(got, "1 claims (1 new), 2 stances") {
			t.Errorf("gamma's import printed %q", got)
		}
		// Beta's jsonl dataset is imported as its JSON export is.
		urlD := storagetest2URL(t, urlA)
		got = parley(t, "import", datasetB, "--db", urlD, "--realm", "delta", "--trust-realm", "beta="+didB, "--trust-realm", "alpha="+didA).
			ok(t, "delta's import of beta's jsonl").stdout
		if !strings.Contains(got, "imported from realm beta") || !strings.Contains(got, "1 claims (1 new), 2 stances") {
			t.Errorf("delta's import of beta's jsonl printed %q", got)
		}
		exportC := filepath.Join(dir, "gamma.json")
		writeFile(t, exportC, parley(t, "export", "--format", "json", "--db", urlC, "--realm", "gamma").ok(t, "gamma's export").stdout)
		out = parley(t, "verify-export", exportC).ok(t, "verify-export of gamma's export").stdout
		if !strings.Contains(out, "attest by alpha:bob on "+claimID) {
			t.Errorf("verify-export of gamma's export printed:\n%s", out)
		}
		// Pinned to the realms whose keys signed them, beta's and gamma's exports verify;
		// pinned to beta's key alone, beta's export fails on bob's binding, which alpha made.
		didC := strings.TrimSpace(parley(t, "realm-key", "--db", urlC).ok(t, "gamma's realm key").stdout)
		for _, pinned := range [][]string{
			{exportB, "--trust-realm", "beta=" + didB, "--trust-realm", "alpha=" + didA},
			{datasetB, "--realm-key", didB, "--realm-key", didA},
			{exportC, "--trust-realm", "gamma=" + didC, "--trust-realm", "alpha=" + didA},
		} {
			parley(t, append([]string{"verify-export"}, pinned...)...).ok(t, "verify-export "+strings.Join(pinned[1:], " "))
		}
		r := parley(t, "verify-export", exportB, "--realm-key", didB)
		r.fails(t, "verify-export of beta's export pinned to beta alone", exitRuntime, "proofs do not hold")
		if !strings.Contains(r.stdout, "FAIL binding of") || !strings.Contains(r.stdout, didA+", not by an expected realm key: "+didB) {
			t.Errorf("verify-export of beta's export pinned to beta alone printed:\n%s", r.stdout)
		}
		var origin struct {
			Claims []protocol.ClaimView `json:"claims"`
		}
		remarshal(t, json.RawMessage(readBack(t, exportC)), &origin)
		if len(origin.Claims) != 1 || origin.Claims[0].Origin.Realm != "alpha" || origin.Claims[0].Origin.Claim != claimID {
			t.Errorf("gamma's claim keeps the origin %+v, not alpha's %s", origin.Claims, claimID)
		}
	})
}

// An import that is refused writes nothing: a realm not trusted, a realm trusted with another
// key, a stance whose proof no longer holds, a binding not made by the realm's key, a key of
// small order, a signed stance relabelled — each re-signed by alpha's own realm key where the
// export's proof would otherwise give it away, so that the check that fails is the one named.
func TestImportRefusals(t *testing.T) {
	eachKind(t, func(t *testing.T, urlA string) {
		dir := t.TempDir()
		aliceToken := tokenFor(t, urlA, "alpha", "alice")
		bobToken := tokenFor(t, urlA, "alpha", "bob")
		a := startServe(t, "--db", urlA, "--realm", "alpha")
		claimID, statement := assertedClaim(t, a.base, aliceToken)
		bob := ed25519.NewKeyFromSeed(bytes.Repeat([]byte{'b'}, ed25519.SeedSize))
		signedAttest(t, a.base, bobToken, bob, "alpha", claimID, statement)
		export := []byte(parley(t, "export", "--format", "json", "--db", urlA, "--realm", "alpha").ok(t, "alpha's export").stdout)
		didA := strings.TrimSpace(parley(t, "realm-key", "--db", urlA).ok(t, "alpha's realm key").stdout)
		realmKey, err := protocol.LoadRealmKey(context.Background(), openDB(t, urlA))
		if err != nil {
			t.Fatal(err)
		}
		stranger := signed.NewSigner(ed25519.NewKeyFromSeed(bytes.Repeat([]byte{'s'}, ed25519.SeedSize)))

		// resign edits the export's members and signs it again with alpha's realm key.
		resign := func(edit func(top map[string]any)) []byte {
			var top map[string]any
			if err := json.Unmarshal(export, &top); err != nil {
				t.Fatal(err)
			}
			delete(top, "proof")
			edit(top)
			raw, _ := json.Marshal(top)
			out, err := realmKey.Sign(raw, time.Now())
			if err != nil {
				t.Fatal(err)
			}
			return out
		}
		keyOf := func(top map[string]any) map[string]any { return top["keys"].([]any)[0].(map[string]any) }
		// everyDocument applies edit to bob's document wherever the export holds it.
		everyDocument := func(top map[string]any, edit func(doc map[string]any) map[string]any) {
			for _, n := range top["nodes"].([]any) {
				if node := n.(map[string]any); node["document"] != nil {
					node["document"] = edit(node["document"].(map[string]any))
				}
			}
			for _, c := range top["claims"].([]any) {
				for _, st := range c.(map[string]any)["attestations"].([]any) {
					if s := st.(map[string]any); s["document"] != nil {
						s["document"] = edit(s["document"].(map[string]any))
					}
				}
			}
		}
		// The identity point, of order 1: signatures "by" it need no private key.
		smallOrder := signed.DIDKey(ed25519.PublicKey(append([]byte{1}, make([]byte, 31)...)))

		cases := []struct {
			name  string
			doc   []byte
			trust string
			want  string
		}{
			{"untrusted realm", export, "", "realm alpha is not trusted here"},
			{"trusted with another key", export, "alpha=" + stranger.DID(), "but this forum trusts " + stranger.DID()},
			{"export changed after its proof", bytes.Replace(export, []byte("PASS on main"), []byte("FAIL on main"), 1), "alpha=" + didA, "a proof does not hold"},
			{"tampered stance proof", resign(func(top map[string]any) {
				everyDocument(top, func(doc map[string]any) map[string]any {
					p := doc["proof"].(map[string]any)
					v := []byte(p["proofValue"].(string))
					v[5] ^= 1
					p["proofValue"] = string(v)
					return doc
				})
			}), "alpha=" + didA, "a proof does not hold"},
			{"forged binding", resign(func(top map[string]any) {
				k := keyOf(top)
				var binding map[string]any
				raw, _ := json.Marshal(k["binding"])
				json.Unmarshal(raw, &binding)
				delete(binding, "proof")
				unsigned, _ := json.Marshal(binding)
				forged, _ := stranger.Sign(unsigned, time.Now())
				k["binding"] = json.RawMessage(forged)
			}), "alpha=" + didA, "it is forged"},
			{"key of small order", resign(func(top map[string]any) {
				k := keyOf(top)
				k["did"] = smallOrder
				binding, _ := json.Marshal(map[string]string{"type": "ParleyKeyBinding", "realm": "alpha", "identity": "alpha:bob", "key": smallOrder, "created_at": "2026-12-01T10:00:00Z"})
				b, _ := realmKey.Sign(binding, time.Now())
				k["binding"] = json.RawMessage(b)
				everyDocument(top, func(doc map[string]any) map[string]any {
					doc["proof"].(map[string]any)["verificationMethod"] = smallOrder + "#" + strings.TrimPrefix(smallOrder, "did:key:")
					return doc
				})
			}), "alpha=" + didA, "small order"},
			{"relabelled stance", resign(func(top map[string]any) {
				for _, c := range top["claims"].([]any) {
					cl := c.(map[string]any)
					cl["verifications"], cl["attestations"] = cl["attestations"], []any{}
				}
			}), "alpha=" + didA, "the signed stance is attest"},
		}
		for _, tc := range cases {
			t.Run(strings.ReplaceAll(tc.name, " ", "_"), func(t *testing.T) {
				urlB := storagetest2URL(t, urlA)
				file := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "-")+".json")
				writeFile(t, file, string(tc.doc))
				args := []string{"import", file, "--db", urlB, "--realm", "beta"}
				if tc.trust != "" {
					args = append(args, "--trust-realm", tc.trust)
				}
				parley(t, args...).fails(t, "import of "+tc.name, exitRuntime, tc.want)
				after := parley(t, "export", "--format", "json", "--db", urlB, "--realm", "beta").ok(t, "beta's export").stdout
				var exp struct {
					Threads, Claims, Keys []any
				}
				json.Unmarshal([]byte(after), &exp)
				if len(exp.Threads) != 0 || len(exp.Claims) != 0 || len(exp.Keys) != 0 {
					t.Errorf("the refused import of %s wrote %d threads, %d claims, %d keys", tc.name, len(exp.Threads), len(exp.Claims), len(exp.Keys))
				}
			})
		}
		// A non-administrator is refused over HTTP before anything is read.
		urlB := storagetest2URL(t, urlA)
		dave := tokenFor(t, urlB, "beta", "dave")
		b := startServe(t, "--db", urlB, "--realm", "beta", "--trust-realm", "alpha="+didA)
		status, res := call(t, b.base, dave, http.MethodPost, "/v1/imports", export)
		if status != http.StatusForbidden || res["reason"] != "token_right_missing" {
			t.Errorf("an agent's import answered %d %v", status, res)
		}
	})
}

// storagetest2URL is a fresh, empty database of the same kind as url.
func storagetest2URL(t *testing.T, url string) string {
	t.Helper()
	kind := storage.SQLite
	if strings.HasPrefix(url, "postgres") {
		kind = storage.Postgres
	}
	return storagetest.NewURL(t, kind)
}

// tokenFor makes an agent token for realm:handle on the database at url.
func tokenFor(t *testing.T, url, realm, handle string) string {
	t.Helper()
	return strings.TrimSpace(parley(t, "token", "create", "--handle", handle, "--db", url, "--realm", realm).ok(t, "a token for "+handle).stdout)
}

// assertedClaim opens a thread and asserts a claim in it, as the token's agent.
func assertedClaim(t *testing.T, base, token string) (id, statement string) {
	t.Helper()
	status, res := call(t, base, token, http.MethodPost, "/v1/messages", []byte(`{"kind":"ask","body":"Does the build pass?"}`))
	if status != http.StatusCreated {
		t.Fatalf("the ask answered %d %v", status, res)
	}
	thread := res["thread"].(map[string]any)["id"].(string)
	statement = "the build passes on main"
	status, res = call(t, base, token, http.MethodPost, "/v1/claims",
		[]byte(`{"thread":"`+thread+`","statement":"`+statement+`","evidence":[{"kind":"log","ref":"PASS on main"}]}`))
	if status != http.StatusCreated {
		t.Fatalf("the claim answered %d %v", status, res)
	}
	return res["claim"].(map[string]any)["id"].(string), statement
}

// signedAttest registers key for the token's agent and attests the claim with a proof by it,
// over the document of PROTOCOL.md § 14.
func signedAttest(t *testing.T, base, token string, key ed25519.PrivateKey, realm, claim, statement string) {
	t.Helper()
	pub := base64.StdEncoding.EncodeToString(key.Public().(ed25519.PublicKey))
	status, res := call(t, base, token, http.MethodPut, "/v1/keys", []byte(`{"public_key":"`+pub+`"}`))
	if status != http.StatusCreated {
		t.Fatalf("registering the key answered %d %v", status, res)
	}
	identity := res["key"].(map[string]any)["identity"].(string)
	note := "go test ./... passes"
	evidence := []protocol.Evidence{{Kind: "reproducer", Ref: "make test", Note: &note}}
	doc, _ := json.Marshal(protocol.StanceDocument("attest", realm, claim, statement, identity, evidence, &note, nil))
	proof, err := signed.NewSigner(key).Prove(doc, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	body, _ := json.Marshal(map[string]any{"evidence": evidence, "note": note, "proof": proof})
	status, res = call(t, base, token, http.MethodPost, "/v1/claims/"+claim+"/attest", body)
	if status != http.StatusOK {
		t.Fatalf("the signed attestation answered %d %v", status, res)
	}
}

// call makes one /v1 request with a bearer token and answers its status and JSON body.
func call(t *testing.T, base, token, method, path string, body []byte) (int, map[string]any) {
	t.Helper()
	req, err := http.NewRequest(method, base+path, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var out map[string]any
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatalf("%s %s answered %d, not JSON: %q", method, path, resp.StatusCode, raw)
	}
	return resp.StatusCode, out
}

// remarshal reads a decoded JSON value into v.
func remarshal(t *testing.T, from, v any) {
	t.Helper()
	raw, err := json.Marshal(from)
	if err == nil {
		err = json.Unmarshal(raw, v)
	}
	if err != nil {
		t.Fatal(err)
	}
}

func writeFile(t *testing.T, path, text string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
}

// parley import reads its FILE as a bounded stream (PROTOCOL.md § 14): a file one byte over
// limits.import_max_bytes is refused with one line and exit 1, and so is /dev/zero, at once:
// it is no JSON.
func TestImportReadsABoundedStream(t *testing.T) {
	eachKind(t, func(t *testing.T, url string) {
		dir := t.TempDir()
		over := filepath.Join(dir, "over.json")
		writeFile(t, over, "{"+strings.Repeat(" ", 4096))
		invocation{args: []string{"import", over, "--db", url, "--realm", "beta"}, env: []string{"PARLEY_LIMIT_IMPORT_MAX_BYTES=4096"}}.run(t).
			fails(t, "the import of 4097 bytes", exitRuntime, "larger than import_max_bytes (4096 bytes)")
		// Refused at its first byte, /dev/zero is read no further (the protocol package's
		// TestImportReadIsBounded counts the bytes and the memory).
		parley(t, "import", "/dev/zero", "--db", url, "--realm", "beta").
			fails(t, "the import of /dev/zero", exitRuntime, "does not begin with a JSON object")
	})
}
