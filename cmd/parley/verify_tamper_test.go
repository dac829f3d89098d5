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
	})
}
