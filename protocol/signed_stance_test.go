package protocol_test

import (
	"context"
	"crypto/ed25519"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/parleyforum/parley/protocol"
	"github.com/parleyforum/parley/signed"
	"github.com/parleyforum/parley/storage"
	"github.com/parleyforum/parley/storage/storagetest"
)

// stanceProof signs the § 14 document of a stance with priv, created at, and answers the proof.
func stanceProof(t *testing.T, priv *signed.Signer, doc map[string]any, at time.Time) *signed.Proof {
	t.Helper()
	raw, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	p, err := priv.Prove(raw, at)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// Signed stances version 2 on both databases: a proof over the rebuilt document is accepted
// and kept; every change of a signed field, a foreign or unregistered key, a stale created
// and a broken proof value are invalid_body with nothing written.
func TestSignedStancesV2(t *testing.T) {
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		svc := newService(t, db)
		ctx := context.Background()
		alice := agent("alice", "read,write")
		bob := newSigner(t, svc, agent("bob", "read,write"), 'b')
		carol := newSigner(t, svc, agent("carol", "read,write"), 'c')
		vera := newSigner(t, svc, agent("vera", "read,write,verify"), 'v')
		unregistered := signed.NewSigner(newSignerKey('u'))
		bobKey, caroleKey, veraKey := signed.NewSigner(bob.priv), signed.NewSigner(carol.priv), signed.NewSigner(vera.priv)
		th := send(t, svc, alice, envelope("ask", "", "Does the build pass?")).Thread.ID
		const statement = "the build passes on main"
		claim := mustClaim(t, svc, alice, "assert", `{"thread":"`+th+`","statement":"`+statement+`","evidence":[{"kind":"log","ref":"PASS"}]}`).ID
		note := "ran it twice"
		evidence := []protocol.Evidence{{Kind: "reproducer", Ref: "go test ./...", Note: &note}}
		evidenceJSON := json.RawMessage(`[{"kind":"reproducer","ref":"go test ./...","note":"ran it twice"}]`)
		realm := svc.Realm()
		now := time.Now()
		attestDoc := protocol.StanceDocument("attest", realm, claim, statement, bob.actor.Identity, evidence, &note, nil)
		attestInput := func(p any) string {
			return jsonOf(map[string]any{"claim": claim, "evidence": evidenceJSON, "note": note, "proof": p})
		}
		otherNote := "ran it once"
		body := "it fails"
		refusals := []struct {
			name  string
			as    *signer
			op    string
			input string
			want  string
		}{
			{"relabelled: a refutation's proof on an attestation", bob, "attest",
				attestInput(stanceProof(t, bobKey, protocol.StanceDocument("refute", realm, claim, statement, bob.actor.Identity, evidence, nil, &note), now)), "does not hold"},
			{"an edited note", bob, "attest",
				attestInput(stanceProof(t, bobKey, protocol.StanceDocument("attest", realm, claim, statement, bob.actor.Identity, evidence, &otherNote, nil), now)), "does not hold"},
			{"another statement", bob, "attest",
				attestInput(stanceProof(t, bobKey, protocol.StanceDocument("attest", realm, claim, statement+"!", bob.actor.Identity, evidence, &note, nil), now)), "does not hold"},
			{"another realm", bob, "attest",
				attestInput(stanceProof(t, bobKey, protocol.StanceDocument("attest", "elsewhere", claim, statement, bob.actor.Identity, evidence, &note, nil), now)), "does not hold"},
			{"carol's key on bob's stance", bob, "attest", attestInput(stanceProof(t, caroleKey, attestDoc, now)), "a key of ainotes:carol"},
			{"an unregistered key", bob, "attest", attestInput(stanceProof(t, unregistered, attestDoc, now)), "not a registered key"},
			{"created 11 minutes ago", bob, "attest", attestInput(stanceProof(t, bobKey, attestDoc, now.Add(-11*time.Minute))), "proof.created"},
			{"created 11 minutes ahead", bob, "attest", attestInput(stanceProof(t, bobKey, attestDoc, now.Add(11*time.Minute))), "proof.created"},
			{"a proof value of zeros", bob, "attest", strings.Replace(attestInput(stanceProof(t, bobKey, attestDoc, now)), `"proofValue":"z`, `"proofValue":"z1111111111111111111111111111111111111111111111111111111111111111`, 1), "does not hold"},
			{"another cryptosuite", bob, "attest", strings.Replace(attestInput(stanceProof(t, bobKey, attestDoc, now)), "eddsa-jcs-2022", "eddsa-rdfc-2022", 1), "proof.cryptosuite"},
			{"a field too many", bob, "attest", strings.Replace(attestInput(stanceProof(t, bobKey, attestDoc, now)), `"type":`, `"nonce":"1","type":`, 1), "proof.nonce"},
			{"no proof value", bob, "attest", strings.Replace(attestInput(stanceProof(t, bobKey, attestDoc, now)), `"proofValue"`, `"proofvalue"`, 1), "proof."},
			{"a refutation signed as an attestation", carol, "refute",
				jsonOf(map[string]any{"claim": claim, "evidence": evidenceJSON, "body": body, "proof": stanceProof(t, caroleKey,
					protocol.StanceDocument("attest", realm, claim, statement, carol.actor.Identity, evidence, nil, &body), now)}), "does not hold"},
		}
		for _, c := range refusals {
			t.Run(c.name, func(t *testing.T) {
				_, err := claimOp(svc, c.as.actor, c.op, c.input)
				e := wantRefused(t, err, protocol.ReasonInvalidBody)
				if e != nil && !strings.Contains(e.Message, c.want) {
					t.Errorf("message %q does not name %q", e.Message, c.want)
				}
			})
		}
		read := readClaim(t, svc, alice, claim)
		if read.State != "unverified" || len(read.Attestations)+len(read.Refutations) != 0 {
			t.Fatalf("refusals wrote something: %+v", read)
		}

		// The good ones: an attestation, a verification without evidence, a refutation.
		if _, err := claimOp(svc, bob.actor, "attest", attestInput(stanceProof(t, bobKey, attestDoc, now))); err != nil {
			t.Fatal(err)
		}
		verifyDoc := protocol.StanceDocument("verify", realm, claim, statement, vera.actor.Identity, nil, nil, nil)
		if _, err := claimOp(svc, vera.actor, "verify", jsonOf(map[string]any{"claim": claim, "proof": stanceProof(t, veraKey, verifyDoc, now)})); err != nil {
			t.Fatal(err)
		}
		refuteDoc := protocol.StanceDocument("refute", realm, claim, statement, carol.actor.Identity, evidence, nil, &body)
		if _, err := claimOp(svc, carol.actor, "refute", jsonOf(map[string]any{"claim": claim, "evidence": evidenceJSON, "body": body, "proof": stanceProof(t, caroleKey, refuteDoc, now)})); err != nil {
			t.Fatal(err)
		}
		read = readClaim(t, svc, alice, claim)
		stances := append(append(read.Attestations, read.Verifications...), read.Refutations...)
		if len(stances) != 3 {
			t.Fatalf("stances %+v", stances)
		}
		for _, st := range stances {
			checked, err := signed.Verify(st.Document)
			if err != nil {
				t.Errorf("%s: the kept document does not verify: %v", st.ID, err)
				continue
			}
			var doc map[string]any
			_ = json.Unmarshal(st.Document, &doc)
			if doc["by"] != st.By.Identity || doc["claim"] != claim || doc["type"] != "ParleyStance" {
				t.Errorf("%s: document %s", st.ID, st.Document)
			}
			if k, err := svc.ListKeys(ctx, alice, []byte(`{"identity":"`+st.By.Identity+`"}`)); err != nil || k.Keys[0].DID != checked[0].DID {
				t.Errorf("%s signed by %s, not by its author's key", st.ID, checked[0].DID)
			}
		}
	})
}

func readClaim(t *testing.T, svc *protocol.Service, a *protocol.Actor, claim string) *protocol.ClaimView {
	t.Helper()
	return mustClaim(t, svc, a, "read", `{"claim":"`+claim+`"}`)
}

func newSignerKey(seed byte) ed25519.PrivateKey {
	return ed25519.NewKeyFromSeed([]byte(strings.Repeat(string(rune(seed)), ed25519.SeedSize)))
}
