package main

import (
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/parleyforum/parley/protocol"
	"github.com/parleyforum/parley/signed"
)

// parley verify-export, the command, exits 1 on each tamper that a signed stance (version 2)
// must make visible: a relabelled stance, an edited note, a removed proof, a forged binding,
// a key bound to another identity, and one key id with two keys; the export as written holds.
func TestVerifyExportCatchesEachTamper(t *testing.T) {
	eachKind(t, func(t *testing.T, url string) {
		ctx := context.Background()
		svc, c, priv := forumWithSignedStance(t, url)
		must := mustFor(t)

		dir := t.TempDir()
		exported := parley(t, "export", "--format", "json", "--db", url).ok(t, "export json").stdout
		whole := filepath.Join(dir, "forum.json")
		writeFile(t, whole, exported)
		if out := parley(t, "verify-export", whole).ok(t, "verify-export of the export as written").stdout; !strings.Contains(out, "3 proofs hold, 0 fail") {
			t.Fatalf("verify-export of the export as written printed:\n%s", out)
		}
		// Each tamper changes a fresh copy of the export; where the export's own proof would
		// give it away first, that proof is dropped too, so that the check named is the one
		// that fails.
		signedNode := func(e map[string]any) map[string]any {
			for _, n := range e["nodes"].([]any) {
				if m := n.(map[string]any); m["document"] != nil {
					return m
				}
			}
			t.Fatal("the export has no signed stance")
			return nil
		}
		firstKey := func(e map[string]any) map[string]any { return e["keys"].([]any)[0].(map[string]any) }
		other := signed.NewSigner(ed25519.NewKeyFromSeed([]byte(strings.Repeat("x", ed25519.SeedSize))))
		forged, err := other.Sign([]byte(`{"type":"ParleyKeyBinding","realm":"`+svc.Realm()+`","identity":"ainotes:bob","key":"`+
			signed.DIDKey(priv.Public().(ed25519.PublicKey))+`","created_at":"2026-12-01T00:00:00Z"}`), time.Now())
		must(forged, err)
		for _, c := range []struct {
			name   string
			tamper func(e map[string]any)
			want   string // in the failing line
		}{
			{"a relabelled stance", func(e map[string]any) { signedNode(e)["type"] = "verification"; delete(e, "proof") }, "relabelled"},
			{"an edited note", func(e map[string]any) { signedNode(e)["text"] = "ran it once"; delete(e, "proof") }, "it was edited"},
			{"the stance's proof removed", func(e map[string]any) { delete(signedNode(e), "document") }, "FAIL export proof"},
			{"the export's proof removed", func(e map[string]any) { delete(e, "proof") }, "it was removed"},
			{"a forged binding", func(e map[string]any) { firstKey(e)["binding"] = json.RawMessage(forged); delete(e, "proof") }, "forged"},
			{"a key bound to another identity", func(e map[string]any) { firstKey(e)["identity"] = "ainotes:eve"; delete(e, "proof") }, "binds"},
			{"one key id with two keys", func(e map[string]any) {
				k := firstKey(e)
				e["keys"] = append(e["keys"].([]any), map[string]any{"id": k["id"], "identity": "ainotes:eve", "did": other.DID(), "binding": k["binding"]})
				delete(e, "proof")
			}, "names two keys"},
		} {
			t.Run(c.name, func(t *testing.T) {
				var e map[string]any
				if err := json.Unmarshal([]byte(exported), &e); err != nil {
					t.Fatal(err)
				}
				c.tamper(e)
				changed, err := json.Marshal(e)
				must(changed, err)
				file := filepath.Join(dir, strings.ReplaceAll(c.name, " ", "-")+".json")
				writeFile(t, file, string(changed))
				r := parley(t, "verify-export", file)
				r.fails(t, "verify-export of "+c.name, exitRuntime, "proofs do not hold")
				if !strings.Contains(r.stdout, "FAIL") || !strings.Contains(r.stdout, c.want) {
					t.Errorf("verify-export of %s does not name %q:\n%s", c.name, c.want, r.stdout)
				}
			})
		}

		// Re-signed whole under another realm key: every binding re-made by it, a claim's
		// evidence edited, the export's proof made anew. Every proof holds — for that key —
		// so only the realm expected tells it: --realm-key or --trust-realm fails it, naming
		// both keys.
		t.Run("re-signed whole under another realm key", func(t *testing.T) {
			must := mustFor(t)
			key, err := svc.RealmKey(ctx)
			must(key, err)
			realKey := key.DID()
			attacker := signed.NewSigner(ed25519.NewKeyFromSeed([]byte(strings.Repeat("m", ed25519.SeedSize))))
			var e map[string]any
			if err := json.Unmarshal([]byte(exported), &e); err != nil {
				t.Fatal(err)
			}
			resign := func(doc map[string]any) map[string]any {
				delete(doc, "proof")
				raw, err := json.Marshal(doc)
				must(raw, err)
				out, err := attacker.Sign(raw, time.Now())
				must(out, err)
				var back map[string]any
				must(back, json.Unmarshal(out, &back))
				return back
			}
			for _, k := range e["keys"].([]any) {
				k := k.(map[string]any)
				k["binding"] = resign(k["binding"].(map[string]any))
			}
			for _, list := range []string{"nodes", "claims"} {
				for _, item := range e[list].([]any) {
					if m := item.(map[string]any); m["id"] == c.Claim.ID && m["evidence"] != nil {
						m["evidence"].([]any)[0].(map[string]any)["ref"] = "FAIL, edited"
					}
				}
			}
			e["realm_key"] = attacker.DID()
			file := filepath.Join(dir, "re-signed.json")
			raw, err := json.Marshal(resign(e))
			must(raw, err)
			writeFile(t, file, string(raw))
			if !strings.Contains(string(raw), "FAIL, edited") {
				t.Fatal("the claim's evidence was not edited")
			}

			// Unpinned, it holds; the summary names the key that signed, first.
			out := parley(t, "verify-export", file).ok(t, "verify-export of the re-signed export, unpinned").stdout
			summary := out[strings.LastIndex(strings.TrimSuffix(out, "\n"), "\n")+1:]
			if !strings.HasPrefix(summary, "signed by the realm key "+attacker.DID()+" of realm "+svc.Realm()+" (not pinned") {
				t.Errorf("the summary of the unpinned check does not name the key that signed first:\n%s", out)
			}
			for _, pin := range [][]string{{"--realm-key", realKey}, {"--trust-realm", svc.Realm() + "=" + realKey}} {
				r := parley(t, append([]string{"verify-export", file}, pin...)...)
				r.fails(t, "verify-export "+strings.Join(pin, " ")+" of the re-signed export", exitRuntime, "signed by the realm key "+attacker.DID())
				if !strings.Contains(r.stderr, realKey) {
					t.Errorf("verify-export %s names not the expected key %s: %s", pin[0], realKey, r.stderr)
				}
				if !strings.Contains(r.stdout, "FAIL export proof of realm "+svc.Realm()+" by "+attacker.DID()) || !strings.Contains(r.stdout, "FAIL binding of ") {
					t.Errorf("verify-export %s fails not the export's proof and the binding:\n%s", pin[0], r.stdout)
				}
			}
			// The export as written holds under the same pins.
			for _, pin := range [][]string{{"--realm-key", realKey}, {"--trust-realm", svc.Realm() + "=" + realKey}} {
				out := parley(t, append([]string{"verify-export", whole}, pin...)...).ok(t, "verify-export "+strings.Join(pin, " ")+" of the export as written").stdout
				if !strings.Contains(out, "signed by the realm key "+realKey+" of realm "+svc.Realm()+", as expected: 3 proofs hold, 0 fail") {
					t.Errorf("verify-export %s of the export as written printed:\n%s", pin[0], out)
				}
			}
			parley(t, "verify-export", whole, "--realm-key", "did:key:zNotAKey").fails(t, "verify-export with a bad --realm-key", exitUsage, "is not a realm key")
		})
	})
}

// forumWithSignedStance fills a fresh database: Alice's claim, attested by Bob with a stance
// signed by his registered key (priv).
func forumWithSignedStance(t *testing.T, url string) (*protocol.Service, *protocol.ClaimResult, ed25519.PrivateKey) {
	t.Helper()
	ctx := context.Background()
	svc := migratedService(t, url)
	must := mustFor(t)
	rights := protocol.Rights{protocol.RightRead: true, protocol.RightWrite: true}
	alice := &protocol.Actor{Identity: "ainotes:alice", Rights: rights}
	bob := &protocol.Actor{Identity: "ainotes:bob", Rights: rights}
	asked, err := svc.Send(ctx, alice, []byte(`{"kind":"ask","body":"Does the build pass?"}`))
	must(asked, err)
	const statement = "the build passes on main"
	c, err := svc.Assert(ctx, alice, []byte(`{"thread":"`+asked.Thread.ID+`","statement":"`+statement+`","evidence":[{"kind":"log","ref":"PASS"}]}`))
	must(c, err)
	priv := ed25519.NewKeyFromSeed([]byte(strings.Repeat("b", ed25519.SeedSize)))
	must(svc.RegisterKey(ctx, bob, []byte(`{"public_key":"`+base64.StdEncoding.EncodeToString(priv.Public().(ed25519.PublicKey))+`"}`)))
	note := "ran it twice"
	evidence := []protocol.Evidence{{Kind: "reproducer", Ref: "make test"}}
	doc, err := json.Marshal(protocol.StanceDocument("attest", svc.Realm(), c.Claim.ID, statement, bob.Identity, evidence, &note, nil))
	must(doc, err)
	proof, err := signed.NewSigner(priv).Prove(doc, time.Now())
	must(proof, err)
	input, err := json.Marshal(map[string]any{"claim": c.Claim.ID, "evidence": evidence, "note": note, "proof": proof})
	must(input, err)
	must(svc.Attest(ctx, bob, input))
	return svc, c, priv
}

// A graph read (GET /v1/graph and MCP claim_graph, the graph page's downloads) carries stance
// documents but no custody: verify-export says so and checks the documents alone — an edited
// one still fails — and a pinned realm key fails it, since no realm signed it.
func TestVerifyExportOfAGraphRead(t *testing.T) {
	eachKind(t, func(t *testing.T, url string) {
		ctx := context.Background()
		svc, _, _ := forumWithSignedStance(t, url)
		reader := &protocol.Actor{Identity: "ainotes:reader", Rights: protocol.Rights{protocol.RightRead: true}}
		dir := t.TempDir()
		read := func(format string) string {
			res, err := svc.Graph(ctx, reader, []byte(`{"format":"`+format+`"}`))
			if err != nil {
				t.Fatal(err)
			}
			var doc []byte
			if format == "json" {
				doc, err = json.Marshal(res) // the page as GET /v1/graph answers it
			} else {
				_, doc, err = res.Document() // the document as the graph page downloads it
			}
			if err != nil {
				t.Fatal(err)
			}
			file := filepath.Join(dir, "graph."+format)
			writeFile(t, file, string(doc))
			return file
		}
		key, err := svc.RealmKey(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, format := range []string{"json", "graphml"} {
			file := read(format)
			out := parley(t, "verify-export", file).ok(t, "verify-export of the "+format+" graph read").stdout
			if !strings.HasPrefix(out, "this is a graph read, not an export: no custody to check") ||
				!strings.Contains(out, "ok   stance att_1: attest by ainotes:bob on cl_1, by the key did:key:") ||
				!strings.Contains(out, "a graph read, no custody: 1 proofs hold, 0 fail") {
				t.Errorf("verify-export of the %s graph read printed:\n%s", format, out)
			}
			r := parley(t, "verify-export", file, "--realm-key", key.DID())
			r.fails(t, "verify-export --realm-key of the "+format+" graph read", exitRuntime, "proofs do not hold")
			if !strings.Contains(r.stdout, "FAIL export proof by an expected realm key: the file carries no export proof") {
				t.Errorf("verify-export --realm-key of the %s graph read printed:\n%s", format, r.stdout)
			}
			edited := filepath.Join(dir, "edited."+format)
			writeFile(t, edited, strings.Replace(string(readBack(t, file)), "ran it twice", "ran it once", 1))
			r = parley(t, "verify-export", edited)
			r.fails(t, "verify-export of an edited "+format+" graph read", exitRuntime, "proofs do not hold")
			if !strings.Contains(r.stdout, "FAIL stance att_1") {
				t.Errorf("verify-export of an edited %s graph read printed:\n%s", format, r.stdout)
			}
		}
	})
}
