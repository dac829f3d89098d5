package protocol_test

import (
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

// A realm speaks for its own identities only (§ 14). Beta trusts alpha, not gamma; alpha's
// operator, who holds alpha's realm key, makes exports that speak for gamma: a claim asserted
// by gamma:eve, a claim with gamma's origin and no proof of gamma's, an unsigned refutation by
// gamma:gina, a stance by gamma:eve signed with a key that alpha's realm key bound to her.
// Each is refused whole, naming what alpha cannot vouch for, and beta is as it was.
func TestImportSpeaksOnlyForItsRealm(t *testing.T) {
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		alpha := openRealm(t, db.Kind(), "alpha", generous(), nil)
		alice, carol := alpha.agent("alice"), alpha.agent("carol")
		th := send(t, alpha.svc, alice, envelope("ask", "", "Does the build pass?")).Thread.ID
		claim := mustClaim(t, alpha.svc, alice, "assert", `{"thread":"`+th+`","statement":"the build passes on main","evidence":[{"kind":"log","ref":"PASS"}]}`)
		mustClaim(t, alpha.svc, carol, "attest", `{"claim":"`+claim.ID+`","evidence":[{"kind":"log","ref":"PASS here too"}]}`)
		export := alpha.export(t, "json", 0)
		beta := openRealm(t, db.Kind(), "beta", generous(), map[string]string{"alpha": alpha.did})

		// eve's key, bound to gamma:eve by alpha's realm key: a binding alpha may not make.
		eve := ed25519.NewKeyFromSeed([]byte(strings.Repeat("e", ed25519.SeedSize)))
		eveDID := signed.DIDKey(eve.Public().(ed25519.PublicKey))
		realmKey, err := protocol.LoadRealmKey(t.Context(), alpha.db)
		if err != nil {
			t.Fatal(err)
		}
		binding, _ := json.Marshal(map[string]string{"type": "ParleyKeyBinding", "realm": "alpha", "identity": "gamma:eve", "key": eveDID, "created_at": "2026-12-01T10:00:00Z"})
		boundByAlpha, err := realmKey.Sign(binding, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		evidence := []protocol.Evidence{{Kind: "log", Ref: "eve ran it"}}
		eveDoc := protocol.StanceDocument("attest", "alpha", claim.ID, claim.Statement, "gamma:eve", evidence, nil, nil)
		eveDoc["proof"] = stanceProof(t, signed.NewSigner(eve), eveDoc, time.Now())

		gammaClaim := func(origin bool) map[string]any {
			c := map[string]any{"id": "cl_5", "thread": th, "statement": "gamma says the build fails",
				"asserted_by": map[string]any{"identity": "gamma:eve", "extension": ""}, "evidence": []any{map[string]any{"kind": "log", "ref": "FAIL"}},
				"created_at": "2026-12-01T10:00:00Z", "attestations": []any{}, "refutations": []any{}, "verifications": []any{}}
			if origin {
				c["origin"] = map[string]any{"realm": "gamma", "claim": "cl_5", "thread": "th_1"}
			}
			return c
		}
		cases := []struct {
			name string
			edit func(top map[string]any)
			want []string
		}{
			{"a claim asserted by gamma:eve", func(top map[string]any) { addTo(top, "claims", gammaClaim(false)) },
				[]string{"claim cl_5 of realm alpha", "asserted by gamma:eve, an identity of realm gamma", "speaks only for its own identities"}},
			{"a claim of gamma's without gamma's proof", func(top map[string]any) { addTo(top, "claims", gammaClaim(true)) },
				[]string{"claim cl_5 of realm alpha", "its origin is claim cl_5 of realm gamma", "no stance signed in realm gamma"}},
			{"an unsigned refutation by gamma:gina", func(top map[string]any) {
				addTo(exportedClaim(t, top, claim.ID), "refutations", map[string]any{"id": "ref_9", "by": map[string]any{"identity": "gamma:gina", "extension": ""},
					"evidence": []any{map[string]any{"kind": "log", "ref": "FAIL"}}, "body": "it fails", "at": "2026-12-01T11:00:00Z"})
			}, []string{"ref_9 by gamma:gina on claim " + claim.ID, "carries no proof of realm gamma's"}},
			{"a stance by gamma:eve with a key alpha bound", func(top map[string]any) {
				addTo(top, "keys", map[string]any{"id": "key_9", "identity": "gamma:eve", "did": eveDID, "binding": json.RawMessage(boundByAlpha)})
				addTo(exportedClaim(t, top, claim.ID), "attestations", map[string]any{"id": "att_9", "by": map[string]any{"identity": "gamma:eve", "extension": ""},
					"evidence": evidence, "at": "2026-12-01T11:00:00Z", "document": eveDoc})
			}, []string{"att_9 by gamma:eve", "is bound by realm alpha's key"}},
		}
		for _, c := range cases {
			t.Run(strings.ReplaceAll(c.name, " ", "_"), func(t *testing.T) {
				before := beta.record(t)
				_, err := beta.importInto(forge(t, alpha, export, c.edit))
				if e := wantRefused(t, err, protocol.ReasonInvalidBody); e != nil {
					for _, w := range c.want {
						if !strings.Contains(e.Message, w) {
							t.Errorf("the refusal %q does not say %q", e.Message, w)
						}
					}
				}
				if after := beta.record(t); after != before {
					t.Errorf("the refused import changed beta:\n%s\n→\n%s", before, after)
				}
			})
		}
		// Alpha's export as it is lands.
		if _, err := beta.importInto(export); err != nil {
			t.Fatal(err)
		}
	})
}

// Known by its origin, a claim of gamma's that came with gamma's own export is changed by no
// other realm's export: alpha can neither refute it in the name of gamma:gina, whose stance it
// cannot sign, nor with its own mallory — whatever alpha carries of gamma's, gamma's proofs
// included. Gamma's own export still adds to it.
func TestImportKnownByOriginIsChangedByItsRealmOnly(t *testing.T) {
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		gamma := openRealm(t, db.Kind(), "gamma", generous(), nil)
		eve, gina := gamma.agent("eve"), newSigner(t, gamma.svc, gamma.agent("gina"), 'g')
		th := send(t, gamma.svc, eve, envelope("ask", "", "Is the cache warm?")).Thread.ID
		claim := mustClaim(t, gamma.svc, eve, "assert", `{"thread":"`+th+`","statement":"the cache is warm","evidence":[{"kind":"log","ref":"hit rate 0.98"}]}`)
		claim = signStance(t, gamma, gina, "attest", claim, map[string]any{"evidence": []protocol.Evidence{{Kind: "log", Ref: "hits"}}})
		fromGamma := gamma.export(t, "json", 0)

		alpha := openRealm(t, db.Kind(), "alpha", generous(), map[string]string{"gamma": gamma.did})
		carried, err := alpha.importInto(fromGamma)
		if err != nil {
			t.Fatal(err)
		}
		fromAlpha := alpha.export(t, "json", 0)
		local := carried.Claims[0].ID

		beta := openRealm(t, db.Kind(), "beta", generous(), map[string]string{"alpha": alpha.did, "gamma": gamma.did})
		if _, err := beta.importInto(fromGamma); err != nil {
			t.Fatal(err)
		}
		// Alpha's export carries gamma's claim with gina's proof, and nothing new: it is known.
		if res, err := beta.importInto(fromAlpha); err != nil || res.Created() || res.Known != 1 {
			t.Fatalf("alpha's export of what beta holds answered %+v, %v", res, err)
		}
		refutation := func(by string) func(top map[string]any) {
			return func(top map[string]any) {
				addTo(exportedClaim(t, top, local), "refutations", map[string]any{"id": "ref_9", "by": map[string]any{"identity": by, "extension": ""},
					"evidence": []any{map[string]any{"kind": "log", "ref": "miss"}}, "body": "the cache is cold", "at": "2026-12-01T11:00:00Z"})
			}
		}
		for _, c := range []struct {
			name, by string
			want     string
		}{
			{"in gamma:gina's name", "gamma:gina", "carries no proof of realm gamma's"},
			{"by alpha's own mallory", "alpha:mallory", "came with the export of realm gamma; only that export and realm gamma's own change it"},
		} {
			t.Run(strings.ReplaceAll(c.name, " ", "_"), func(t *testing.T) {
				before := beta.record(t)
				_, err := beta.importInto(forge(t, alpha, fromAlpha, refutation(c.by)))
				if e := wantRefused(t, err, protocol.ReasonInvalidBody); e != nil && !strings.Contains(e.Message, c.want) {
					t.Errorf("the refusal %q does not say %q", e.Message, c.want)
				}
				if after := beta.record(t); after != before {
					t.Errorf("the refused import changed beta:\n%s\n→\n%s", before, after)
				}
				for _, cl := range allClaims(t, beta) {
					if cl.State == protocol.ClaimRefuted || len(cl.Refutations) != 0 {
						t.Errorf("gamma's claim reads %s with %d refutations in beta", cl.State, len(cl.Refutations))
					}
				}
			})
		}

		// Gamma's own export refutes it in beta.
		mustClaim(t, gamma.svc, gamma.agent("hal"), "refute", `{"claim":"`+claim.ID+`","evidence":[{"kind":"log","ref":"miss"}],"body":"cold after the restart"}`)
		res, err := beta.importInto(gamma.export(t, "json", 0))
		if err != nil || res.Stances != 1 {
			t.Fatalf("gamma's second export answered %+v, %v", res, err)
		}
		if cl := allClaims(t, beta); len(cl) != 1 || cl[0].State != protocol.ClaimRefuted {
			t.Errorf("after gamma's refutation beta reads %+v", cl)
		}
	})
}

// allClaims reads every claim of every thread of r.
func allClaims(t *testing.T, r *realmForum) []*protocol.ClaimView {
	t.Helper()
	var out []*protocol.ClaimView
	for _, th := range allThreads(t, r.svc) {
		for _, c := range readThread(t, r.svc, th.ID).Claims {
			out = append(out, c)
		}
	}
	return out
}
