package protocol_test

import (
	"strings"
	"testing"
	"time"

	"github.com/parleyforum/parley/graph"
	"github.com/parleyforum/parley/protocol"
	"github.com/parleyforum/parley/signed"
	"github.com/parleyforum/parley/storage"
	"github.com/parleyforum/parley/storage/storagetest"
)

// An import keeps what it carries (§ 14): the claim's created_at, valid_until and
// provenance, each stance's at and provenance — a claim that expired in alpha reads expired
// in beta, its stances replayed as of their own time — and the import's own time apart, as
// origin.imported_at.
func TestImportKeepsWhatItCarries(t *testing.T) {
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		alpha := openRealm(t, db.Kind(), "alpha", generous(), nil)
		alice, bob, vera := alpha.agent("alice"), alpha.agent("bob"), alpha.agent("vera", protocol.RightVerify)
		th := send(t, alpha.svc, alice, envelope("ask", "", "Is the mirror fresh?")).Thread.ID
		claim := mustClaim(t, alpha.svc, alice, "assert", jsonOf(map[string]any{"thread": th, "statement": "the mirror is fresh",
			"evidence": []any{map[string]any{"kind": "log", "ref": "synced 10:00"}}, "valid_until": time.Now().Add(time.Hour).Format(time.RFC3339),
			"provenance": map[string]any{"model": "model-a", "client": "client-a"}}))
		mustClaim(t, alpha.svc, bob, "attest", jsonOf(map[string]any{"claim": claim.ID, "evidence": []any{map[string]any{"kind": "log", "ref": "synced"}},
			"provenance": map[string]any{"model": "model-b"}}))
		mustClaim(t, alpha.svc, vera, "verify", jsonOf(map[string]any{"claim": claim.ID, "provenance": map[string]any{"client": "client-v"}}))
		// Alpha's record: the claim was made on the 1st, checked an hour later, and expired at
		// noon.
		created := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
		expired := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
		setTimes(t, alpha, claim.ID, created, &expired, created.Add(time.Hour))
		inAlpha := claimJSON(t, alpha, claim.ID)
		if inAlpha["expired"] != true || inAlpha["certainty"] != protocol.CertaintyExpired {
			t.Fatalf("alpha reads its claim as %v", inAlpha)
		}

		for _, format := range []string{"json", protocol.FormatJSONL} {
			t.Run(format, func(t *testing.T) {
				beta := openRealm(t, db.Kind(), "beta", generous(), map[string]string{"alpha": alpha.did})
				before := time.Now().UTC()
				res, err := beta.importInto(alpha.export(t, format, 0))
				if err != nil {
					t.Fatal(err)
				}
				got := claimJSON(t, beta, res.Claims[0].ID)
				for _, field := range []string{"statement", "created_at", "valid_until", "expired", "certainty", "provenance", "evidence", "asserted_by"} {
					if jsonOf(got[field]) != jsonOf(inAlpha[field]) {
						t.Errorf("beta's claim has %s %s, alpha's %s", field, jsonOf(got[field]), jsonOf(inAlpha[field]))
					}
				}
				if got["state"] != string(protocol.ClaimVerified) {
					t.Errorf("beta replays the stances taken before the claim expired to %s, not verified", got["state"])
				}
				for _, list := range []string{"attestations", "verifications"} {
					mine, theirs := got[list].([]any), inAlpha[list].([]any)
					if len(mine) != len(theirs) {
						t.Fatalf("beta has %d %s, alpha %d", len(mine), list, len(theirs))
					}
					for i := range mine {
						m, a := mine[i].(map[string]any), theirs[i].(map[string]any)
						for _, field := range []string{"at", "provenance", "evidence", "by"} {
							if jsonOf(m[field]) != jsonOf(a[field]) {
								t.Errorf("beta's %s %v has %s %s, alpha's %s", list, m["id"], field, jsonOf(m[field]), jsonOf(a[field]))
							}
						}
					}
				}
				origin, _ := got["origin"].(map[string]any)
				at, err := time.Parse(time.RFC3339Nano, stringOf(origin["imported_at"]))
				if err != nil || at.Before(before.Truncate(time.Microsecond)) || origin["realm"] != "alpha" || origin["claim"] != claim.ID || origin["thread"] != th {
					t.Errorf("beta's claim has the origin %v (imported at %v, the import began %v)", origin, at, before)
				}
				// The dataset says the same.
				var line map[string]any
				for _, l := range datasetLines(t, beta.export(t, protocol.FormatJSONL, 0)) {
					if l["type"] == "claim" {
						line = l
					}
				}
				if jsonOf(line["created_at"]) != jsonOf(inAlpha["created_at"]) || jsonOf(line["origin"]) != jsonOf(origin) {
					t.Errorf("beta's claim line has created_at %v and origin %v", line["created_at"], line["origin"])
				}
			})
		}
	})
}

func stringOf(v any) string {
	s, _ := v.(string)
	return s
}

// A stance signed in beta on a claim imported from alpha names the claim by its id in beta
// and by its origin (§ 14): signed without the origin it is refused, with it it is taken, and
// a third realm that carries it on binds it to the claim by the origin, offline — gamma
// imports beta's dataset, and delta gamma's, where the claim has yet another id.
func TestStanceOnImportedClaimNamesItsOrigin(t *testing.T) {
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		alpha := openRealm(t, db.Kind(), "alpha", generous(), nil)
		alice, bob := alpha.agent("alice"), newSigner(t, alpha.svc, alpha.agent("bob"), 'b')
		th := send(t, alpha.svc, alice, envelope("ask", "", "Does the build pass?")).Thread.ID
		claim := mustClaim(t, alpha.svc, alice, "assert", `{"thread":"`+th+`","statement":"the build passes on main","evidence":[{"kind":"log","ref":"PASS"}]}`)
		signStance(t, alpha, bob, "attest", claim, map[string]any{"evidence": []protocol.Evidence{{Kind: "log", Ref: "PASS again"}}})

		// Each realm holds a claim of its own before it imports, so that alpha's claim has
		// another id in each: cl_2 in beta, cl_3 in gamma.
		beta := openRealm(t, db.Kind(), "beta", generous(), map[string]string{"alpha": alpha.did})
		carol := newSigner(t, beta.svc, beta.agent("carol"), 'c')
		fields := func() map[string]any {
			return map[string]any{"evidence": []protocol.Evidence{{Kind: "log", Ref: "PASS on beta"}}}
		}
		thB := send(t, beta.svc, beta.agent("dan"), envelope("ask", "", "Is beta's cache warm?")).Thread.ID
		own := mustClaim(t, beta.svc, beta.agent("dan"), "assert", `{"thread":"`+thB+`","statement":"the cache is warm","evidence":[{"kind":"log","ref":"hits"}]}`)
		signStance(t, beta, carol, "attest", own, fields())
		res, err := beta.importInto(alpha.export(t, "json", 0))
		if err != nil {
			t.Fatal(err)
		}
		imported := mustClaim(t, beta.svc, reader, "read", `{"claim":"`+res.Claims[0].ID+`"}`)
		withoutOrigin := stanceDocumentFor(t, "beta", carol.actor.Identity, "attest", imported, fields())
		delete(withoutOrigin, "origin")
		_, err = claimOp(beta.svc, carol.actor, "attest", jsonOf(map[string]any{"claim": imported.ID, "evidence": fields()["evidence"],
			"proof": stanceProof(t, signed.NewSigner(carol.priv), withoutOrigin, time.Now())}))
		wantRefused(t, err, protocol.ReasonInvalidBody)
		attested := signStance(t, beta, carol, "attest", imported, fields())
		if doc := string(attested.Attestations[1].Document); imported.ID != "cl_2" || !strings.Contains(doc, `"origin":{"claim":"`+claim.ID+`","realm":"alpha"}`) {
			t.Errorf("carol's document on %s is %s", imported.ID, doc)
		}

		gamma := openRealm(t, db.Kind(), "gamma", generous(), map[string]string{"alpha": alpha.did, "beta": beta.did})
		gus := gamma.agent("gus")
		thC := send(t, gamma.svc, gus, envelope("ask", "", "Is gamma's disk full?")).Thread.ID
		mustClaim(t, gamma.svc, gus, "assert", `{"thread":"`+thC+`","statement":"the disk is not full","evidence":[{"kind":"log","ref":"df"}]}`)
		if _, err := gamma.importInto(beta.export(t, protocol.FormatJSONL, 0)); err != nil {
			t.Fatal(err)
		}
		fromGamma := gamma.export(t, protocol.FormatJSONL, 0)
		text, failed := checkDatasetText(t, fromGamma)
		if failed != 0 || !strings.Contains(text, "attest by beta:carol on cl_2") {
			t.Errorf("the check of gamma's dataset (%d fail):\n%s", failed, text)
		}
		delta := openRealm(t, db.Kind(), "delta", generous(), map[string]string{"alpha": alpha.did, "beta": beta.did, "gamma": gamma.did})
		carried, err := delta.importInto(fromGamma)
		if err != nil {
			t.Fatal(err)
		}
		var stances int
		for _, c := range carried.Claims {
			if c.Origin.Realm == "alpha" {
				stances = len(mustClaim(t, delta.svc, reader, "read", `{"claim":"`+c.ID+`"}`).Attestations)
			}
		}
		if len(carried.Claims) != 3 || stances != 2 {
			t.Errorf("delta's import of gamma's dataset answered %+v, alpha's claim with %d attestations", carried, stances)
		}
		if r, err := graph.CheckCustody(gamma.export(t, "json", 0)); err != nil || r.Failed() != 0 {
			t.Errorf("the check of gamma's JSON export: %+v, %v", r, err)
		}
	})
}
