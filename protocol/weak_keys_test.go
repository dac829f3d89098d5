package protocol_test

import (
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/mr-tron/base58"

	"github.com/parleyforum/parley/graph"
	"github.com/parleyforum/parley/protocol"
	"github.com/parleyforum/parley/signed"
	"github.com/parleyforum/parley/storage"
	"github.com/parleyforum/parley/storage/storagetest"
)

// No path takes a key of small order (issue 22, item 7): with such a key a "signature" is
// made without any private key — for the identity point, 0x01 and 63 zero bytes holds over any
// message. Each way a key comes in is tried with each such key: registering it, signing a
// stance with it, an import whose binding and stance name it, and a document or export whose
// proof names it, checked offline. Artifacts take no key at all.
func TestNoPathTakesASmallOrderKey(t *testing.T) {
	identity := append([]byte{1}, make([]byte, 31)...)
	orderTwo, _ := hex.DecodeString("ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f")
	orderEight, _ := hex.DecodeString("c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a")
	weak := map[string][]byte{"identity point": identity, "all zeros": make([]byte, 32), "order two": orderTwo, "order eight": orderEight}
	forgedSig := "z" + base58.Encode(append([]byte{1}, make([]byte, 63)...))
	// forge is doc with a proof "by" key that no private key made.
	forge := func(doc map[string]any, key []byte) map[string]any {
		m := signed.DIDKey(ed25519.PublicKey(key))
		out := map[string]any{}
		for k, v := range doc {
			out[k] = v
		}
		out["proof"] = map[string]any{"type": signed.ProofType, "cryptosuite": signed.Cryptosuite, "created": time.Now().UTC().Format(time.RFC3339),
			"verificationMethod": m + "#" + m[len("did:key:"):], "proofPurpose": signed.AssertionMethod, "proofValue": forgedSig}
		return out
	}
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		ctx := context.Background()
		export, didA := alphaExport(t, db)
		alpha := protocol.New(db, protocol.Options{Realm: "alpha", Limits: generous()})
		realmKey, err := alpha.RealmKey(ctx)
		if err != nil {
			t.Fatal(err)
		}
		beta := protocol.New(storagetest.Open(t, db.Kind()), protocol.Options{Realm: "beta", Limits: generous(), TrustRealms: map[string]string{"alpha": didA}})
		carol := realmAgent("alpha", "carol")
		th := send(t, alpha, carol, envelope("ask", "", "Is this signed?")).Thread.ID
		const statement = "signed without a private key"
		claim := mustClaim(t, alpha, carol, "assert", `{"thread":"`+th+`","statement":"`+statement+`","evidence":[{"kind":"log","ref":"x"}]}`).ID
		dave := realmAgent("alpha", "dave")
		for name, key := range weak {
			t.Run(name, func(t *testing.T) {
				did := signed.DIDKey(ed25519.PublicKey(key))
				_, err := alpha.RegisterKey(ctx, dave, []byte(`{"public_key":"`+base64.StdEncoding.EncodeToString(key)+`"}`))
				wantRefused(t, err, protocol.ReasonInvalidBody)

				evidence := []protocol.Evidence{{Kind: "log", Ref: "y"}}
				doc := protocol.StanceDocument("attest", "alpha", claim, statement, dave.Identity, evidence, nil, nil)
				forged := forge(doc, key)
				_, err = claimOp(alpha, dave, "attest", jsonOf(map[string]any{"claim": claim, "evidence": evidence, "proof": forged["proof"]}))
				wantRefused(t, err, protocol.ReasonInvalidBody)

				raw, _ := json.Marshal(forged)
				if report, err := graph.CheckCustody(raw); err != nil || report.Failed() != 1 {
					t.Errorf("verify-export of a document signed by a key of small order: %v, %+v", err, report)
				}
				// An export whose own proof names a key of small order as its realm key.
				var top map[string]any
				json.Unmarshal(export, &top)
				delete(top, "proof")
				top["realm_key"] = did
				raw, _ = json.Marshal(forge(top, key))
				if report, err := graph.CheckCustody(raw); err != nil || report.Failed() == 0 {
					t.Errorf("verify-export of an export signed by a key of small order: %v, %+v", err, report)
				}
				_, err = beta.ImportExport(ctx, protocol.OperatorActor(), raw, 0)
				wantRefused(t, err, protocol.ReasonInvalidBody)

				// An export of the trusted realm, signed by its real key, binding the weak key
				// to bob and his stance "signed" by it.
				json.Unmarshal(export, &top)
				delete(top, "proof")
				k := top["keys"].([]any)[0].(map[string]any)
				binding, _ := json.Marshal(map[string]string{"type": "ParleyKeyBinding", "realm": "alpha", "identity": "alpha:bob", "key": did, "created_at": "2026-12-01T10:00:00Z"})
				signedBinding, _ := realmKey.Sign(binding, time.Now())
				k["did"], k["binding"] = did, json.RawMessage(signedBinding)
				reforge := func(v any) any {
					d := v.(map[string]any)
					delete(d, "proof")
					return forge(d, key)
				}
				for _, n := range top["nodes"].([]any) {
					if node := n.(map[string]any); node["document"] != nil {
						node["document"] = reforge(node["document"])
					}
				}
				for _, c := range top["claims"].([]any) {
					for _, st := range c.(map[string]any)["attestations"].([]any) {
						if s := st.(map[string]any); s["document"] != nil {
							s["document"] = reforge(s["document"])
						}
					}
				}
				raw, _ = json.Marshal(top)
				resigned, _ := realmKey.Sign(raw, time.Now())
				_, err = beta.ImportExport(ctx, protocol.OperatorActor(), resigned, 0)
				if e := wantRefused(t, err, protocol.ReasonInvalidBody); e != nil && !strings.Contains(e.Message, "small order") {
					t.Errorf("the import of a binding of a key of small order is refused for another reason: %s", e.Message)
				}
			})
		}
		if n := len(allThreads(t, beta)); n != 0 {
			t.Errorf("the refused imports wrote %d threads", n)
		}
	})
}
