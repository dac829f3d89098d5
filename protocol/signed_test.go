package protocol_test

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/parleyforum/parley/protocol"
	"github.com/parleyforum/parley/signed"
	"github.com/parleyforum/parley/storage"
	"github.com/parleyforum/parley/storage/storagetest"
)

// § 14 signed on both databases: keys; a version 1 signature refused on every new stance;
// and stances stored with one before version 2 still read with it and checkable.

// signer is an identity with an Ed25519 key registered for it.
type signer struct {
	actor *protocol.Actor
	priv  ed25519.PrivateKey
	key   string // key_<n>
}

// newSigner makes a key from seed (a byte repeated) and registers it for a.
func newSigner(t *testing.T, svc *protocol.Service, a *protocol.Actor, seed byte) *signer {
	t.Helper()
	priv := ed25519.NewKeyFromSeed([]byte(strings.Repeat(string(rune(seed)), ed25519.SeedSize)))
	res, err := svc.RegisterKey(context.Background(), a, []byte(jsonOf(map[string]string{"public_key": publicKeyOf(priv)})))
	if err != nil {
		t.Fatalf("register a key for %s: %v", a.Identity, err)
	}
	return &signer{actor: a, priv: priv, key: res.Key.ID}
}

func publicKeyOf(priv ed25519.PrivateKey) string {
	return base64.StdEncoding.EncodeToString(priv.Public().(ed25519.PublicKey))
}

// legacySignature is a version 1 signature field for a stance on claim (with statement)
// citing evidence, signed with priv as by at the time at: one that held before version 2.
func legacySignature(t *testing.T, priv ed25519.PrivateKey, key, claim, statement, by string, evidence []signed.Evidence, at time.Time) map[string]string {
	t.Helper()
	stamp := at.UTC().Format(time.RFC3339)
	sig, err := signed.Sign(priv, signed.NewPayload(claim, statement, evidence, by, stamp))
	if err != nil {
		t.Fatal(err)
	}
	return map[string]string{"key": key, "at": stamp, "sig": sig}
}

// A version 1 signature covers too little (not the kind of stance, nor its note): attest,
// refute and verify refuse it, even one that holds, with invalid_body naming what to send
// instead, and write nothing.
func TestVersion1SignatureRefused(t *testing.T) {
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		svc := newService(t, db)
		alice := agent("alice", "read,write")
		bob := newSigner(t, svc, agent("bob", "read,write"), 'b')
		vera := newSigner(t, svc, agent("vera", "read,write,verify"), 'v')
		th := send(t, svc, alice, envelope("ask", "", "Does the build pass?")).Thread.ID
		const statement = "the build passes on main"
		claim := mustClaim(t, svc, alice, "assert", `{"thread":"`+th+`","statement":"`+statement+`","evidence":[{"kind":"log","ref":"PASS"}]}`).ID
		evidence := []signed.Evidence{{Kind: "log", Ref: "go test ./... PASS"}}
		evidenceJSON := json.RawMessage(`[{"kind":"log","ref":"go test ./... PASS"}]`)
		now := time.Now()
		for _, c := range []struct {
			op    string
			as    *signer
			input map[string]any
		}{
			{"attest", bob, map[string]any{"evidence": evidenceJSON}},
			{"refute", bob, map[string]any{"evidence": evidenceJSON, "body": "it fails on arm64"}},
			{"verify", vera, map[string]any{}},
		} {
			t.Run(c.op, func(t *testing.T) {
				input := map[string]any{"claim": claim}
				for k, v := range c.input {
					input[k] = v
				}
				items := evidence
				if c.op == "verify" {
					items = nil
				}
				input["signature"] = legacySignature(t, c.as.priv, c.as.key, claim, statement, c.as.actor.Identity, items, now)
				_, err := claimOp(svc, c.as.actor, c.op, jsonOf(input))
				e := wantRefused(t, err, protocol.ReasonInvalidBody)
				for _, want := range []string{"field signature", "proof", "eddsa-jcs-2022", "profile signed"} {
					if e != nil && !strings.Contains(e.Message, want) {
						t.Errorf("refused with %q, want it to say %q", e.Message, want)
					}
				}
			})
		}
		read := mustClaim(t, svc, reader, "read", `{"claim":"`+claim+`"}`)
		if read.State != protocol.ClaimUnverified || len(read.Attestations)+len(read.Refutations)+len(read.Verifications) != 0 {
			t.Errorf("refused signatures changed the claim: %s with %d attestations, %d refutations, %d verifications",
				read.State, len(read.Attestations), len(read.Refutations), len(read.Verifications))
		}
		if evs := events(t, svc, th); len(evs) != 2 { // the ask and the assert
			t.Errorf("refused signatures wrote events: %d", len(evs))
		}
	})
}

// Stances stored with a version 1 signature before version 2 (written straight into their
// rows, as such a forum stored them) read with it: the key, its public key, the at and the
// signature, enough for a reader to check it without the server.
func TestLegacySignaturesRead(t *testing.T) {
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		svc := newService(t, db)
		alice := agent("alice", "read,write")
		bob := newSigner(t, svc, agent("bob", "read,write"), 'b')
		carol := newSigner(t, svc, agent("carol", "read,write"), 'c')
		vera := newSigner(t, svc, agent("vera", "read,write,verify"), 'v')
		th := send(t, svc, alice, envelope("ask", "", "Does the build pass?")).Thread.ID
		claim := mustClaim(t, svc, alice, "assert", `{"thread":"`+th+`","statement":"the build passes on main","evidence":[{"kind":"log","ref":"PASS"}]}`).ID
		mustClaim(t, svc, bob.actor, "attest", `{"claim":"`+claim+`","evidence":[{"kind":"reproducer","ref":"go test ./...","note":"ran it twice"}]}`)
		mustClaim(t, svc, carol.actor, "attest", `{"claim":"`+claim+`","evidence":[{"kind":"log","ref":"PASS"}]}`)
		mustClaim(t, svc, vera.actor, "verify", `{"claim":"`+claim+`"}`)
		stored := mustClaim(t, svc, reader, "read", `{"claim":"`+claim+`"}`)
		now := time.Now()
		storagetest.SignLegacy(t, db, stored.Attestations[0].ID, bob.key, bob.priv, now)
		storagetest.SignLegacy(t, db, stored.Verifications[0].ID, vera.key, vera.priv, now)

		read := mustClaim(t, svc, reader, "read", `{"claim":"`+claim+`"}`)
		if read.State != protocol.ClaimVerified || len(read.Attestations) != 2 || len(read.Verifications) != 1 {
			t.Fatalf("the claim reads %s with %d attestations and %d verifications", read.State, len(read.Attestations), len(read.Verifications))
		}
		if read.Attestations[1].Signature != nil {
			t.Errorf("the unsigned attestation reads signed: %+v", read.Attestations[1].Signature)
		}
		for _, st := range []*protocol.StanceView{read.Attestations[0], read.Verifications[0]} {
			sig := st.Signature
			if sig == nil {
				t.Fatalf("%s has no signature", st.ID)
			}
			s := map[string]*signer{bob.actor.Identity: bob, vera.actor.Identity: vera}[st.By.Identity]
			if sig.Key != s.key || sig.PublicKey != publicKeyOf(s.priv) {
				t.Errorf("%s is signed with %s (%s), want %s", st.ID, sig.Key, sig.PublicKey, s.key)
			}
			// What a reader gets is enough to check the signature without the server.
			items := make([]signed.Evidence, len(st.Evidence))
			for i, e := range st.Evidence {
				items[i] = signed.Evidence{Kind: e.Kind, Ref: e.Ref, Note: e.Note}
			}
			if err := signed.VerifyLegacy(sig.PublicKey, sig.Sig, signed.NewPayload(read.ID, read.Statement, items, st.By.Identity, sig.At)); err != nil {
				t.Errorf("%s: the signature as read does not hold: %v", st.ID, err)
			}
		}
	})
}

func TestKeys(t *testing.T) {
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		svc := newService(t, db)
		ctx := context.Background()
		bob, carol := agent("bob", "read,write"), agent("carol", "read,write")
		key := base64.StdEncoding.EncodeToString(ed25519.NewKeyFromSeed(make([]byte, 32)).Public().(ed25519.PublicKey))
		first, err := svc.RegisterKey(ctx, bob, []byte(`{"public_key":"`+key+`"}`))
		if err != nil {
			t.Fatal(err)
		}
		if !first.Created() || first.Key.Identity != bob.Identity || first.Key.PublicKey != key || !strings.HasPrefix(first.Key.ID, "key_") {
			t.Errorf("registered %+v, created %v", first.Key, first.Created())
		}
		again, err := svc.RegisterKey(ctx, bob, []byte(`{"parley":"1","public_key":"`+key+`"}`))
		if err != nil {
			t.Fatal(err)
		}
		if again.Created() || !reflect.DeepEqual(again.Key, first.Key) {
			t.Errorf("the same key again: %+v, created %v; want %+v, not created", again.Key, again.Created(), first.Key)
		}
		// The key's did:key, and its binding by the realm key (§ 14).
		if first.Key.DID != "did:key:z6MkiTBz1ymuepAQ4HEHYSF1H8quG5GLVVQR3djdX3mDooWp" {
			t.Errorf("did %s", first.Key.DID)
		}
		checkBinding(t, svc, first.Key)
		// A key speaks for one identity only: another identity cannot register it.
		_, err = svc.RegisterKey(ctx, carol, []byte(`{"public_key":"`+key+`"}`))
		wantRefused(t, err, protocol.ReasonInvalidTransition)
		carolsKey := base64.StdEncoding.EncodeToString(ed25519.NewKeyFromSeed(bytes.Repeat([]byte{3}, 32)).Public().(ed25519.PublicKey))
		if _, err := svc.RegisterKey(ctx, carol, []byte(`{"public_key":"`+carolsKey+`"}`)); err != nil {
			t.Fatal(err)
		}
		identityPoint := make([]byte, 32)
		identityPoint[0] = 1
		orderTwo, _ := hex.DecodeString("ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f")
		nonCanonical, _ := hex.DecodeString("edffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f")
		for _, c := range []struct {
			name  string
			actor *protocol.Actor
			input string
			want  protocol.Reason
		}{
			{"no token", nil, `{"public_key":"` + key + `"}`, protocol.ReasonUnauthenticated},
			{"not base64", bob, `{"public_key":"not base64!"}`, protocol.ReasonInvalidBody},
			{"31 bytes", bob, `{"public_key":"` + base64.StdEncoding.EncodeToString(make([]byte, 31)) + `"}`, protocol.ReasonInvalidBody},
			{"33 bytes", bob, `{"public_key":"` + base64.StdEncoding.EncodeToString(make([]byte, 33)) + `"}`, protocol.ReasonInvalidBody},
			{"the identity point", bob, `{"public_key":"AQAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA="}`, protocol.ReasonInvalidBody},
			{"the identity point, again", bob, `{"public_key":"` + base64.StdEncoding.EncodeToString(identityPoint) + `"}`, protocol.ReasonInvalidBody},
			{"all zeros", bob, `{"public_key":"` + base64.StdEncoding.EncodeToString(make([]byte, 32)) + `"}`, protocol.ReasonInvalidBody},
			{"order two", bob, `{"public_key":"` + base64.StdEncoding.EncodeToString(orderTwo) + `"}`, protocol.ReasonInvalidBody},
			{"non-canonical", bob, `{"public_key":"` + base64.StdEncoding.EncodeToString(nonCanonical) + `"}`, protocol.ReasonInvalidBody},
			{"a trailing newline", bob, `{"public_key":"` + key + `\n"}`, protocol.ReasonInvalidBody},
			{"a leading space", bob, `{"public_key":" ` + key + `"}`, protocol.ReasonInvalidBody},
			{"no padding", bob, `{"public_key":"` + strings.TrimRight(key, "=") + `"}`, protocol.ReasonInvalidBody},
			{"no key", bob, `{}`, protocol.ReasonInvalidBody},
			{"a field too many", bob, `{"public_key":"` + key + `","alg":"ed25519"}`, protocol.ReasonInvalidBody},
			{"a token that only reads", reader, `{"public_key":"` + key + `"}`, protocol.ReasonTokenRightMissing},
		} {
			_, err := svc.RegisterKey(ctx, c.actor, []byte(c.input))
			t.Run(c.name, func(t *testing.T) { wantRefused(t, err, c.want) })
		}
		list, err := svc.ListKeys(ctx, reader, []byte(`{"identity":"ainotes:bob"}`))
		if err != nil || len(list.Keys) != 1 || !reflect.DeepEqual(list.Keys[0], first.Key) {
			t.Errorf("bob's keys: %+v, %v", list, err)
		}
		own, err := svc.ListKeys(ctx, carol, []byte(`{}`))
		if err != nil || len(own.Keys) != 1 || own.Keys[0].Identity != carol.Identity {
			t.Errorf("carol's own keys: %+v, %v", own, err)
		}
		none, err := svc.ListKeys(ctx, reader, []byte(`{}`))
		if err != nil || none.Keys == nil || len(none.Keys) != 0 {
			t.Errorf("the keys of one without keys: %+v, %v", none, err)
		}
		_, err = svc.ListKeys(ctx, reader, []byte(`{"identity":"bob"}`))
		wantRefused(t, err, protocol.ReasonInvalidBody)
	})
}

// checkBinding: the key's binding is {type: ParleyKeyBinding, realm, identity, key: did,
// created_at}, with a proof by the realm key of the manifest.
func checkBinding(t *testing.T, svc *protocol.Service, k *protocol.KeyView) {
	t.Helper()
	checked, err := signed.Verify(k.Binding)
	if err != nil {
		t.Fatalf("binding %s: %v", k.Binding, err)
	}
	if checked[0].DID != svc.Manifest(nil).RealmKey {
		t.Errorf("binding signed by %s, not by the realm key %s", checked[0].DID, svc.Manifest(nil).RealmKey)
	}
	var b map[string]any
	if err := json.Unmarshal(k.Binding, &b); err != nil {
		t.Fatal(err)
	}
	if b["type"] != "ParleyKeyBinding" || b["realm"] != svc.Realm() || b["identity"] != k.Identity || b["key"] != k.DID || b["created_at"] == nil {
		t.Errorf("binding %s", k.Binding)
	}
}
