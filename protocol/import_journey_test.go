package protocol_test

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/parleyforum/parley/graph"
	"github.com/parleyforum/parley/protocol"
	"github.com/parleyforum/parley/storage"
	"github.com/parleyforum/parley/storage/storagetest"
)

// Claims travel from alpha into beta and on into gamma (§ 14), as researchers carry them: every
// time, provenance, valid_until and origin arrives as alpha and beta recorded it; a stance
// signed in beta on alpha's claim is bound to it in gamma by its origin; what alpha cannot
// vouch for and what beta's rules refuse are refused whole; and each export's custody holds,
// by the realm key of the forum that made it, also pinned as a researcher pins it (parley
// verify-export --trust-realm NAME=DID or --realm-key DID, graph.CustodyReport.Expect): beta's
// and gamma's exports verify pinned to the realms whose keys signed them, and fail pinned to
// another key for their realm, or to their own key alone.
func TestImportThreeRealms(t *testing.T) {
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		// Alpha: two claims in th_1, every stance signed; the second expired in alpha. A third,
		// in th_2, says more than beta takes.
		alpha := openRealm(t, db.Kind(), "alpha", generous(), nil)
		alice := alpha.agent("alice")
		bob := newSigner(t, alpha.svc, alpha.agent("bob"), 'b')
		vera := newSigner(t, alpha.svc, alpha.agent("vera", protocol.RightVerify), 'v')
		th := send(t, alpha.svc, alice, envelope("ask", "", "Is the release ready?")).Thread.ID
		assert := func(thread, statement string, validUntil time.Time) *protocol.ClaimView {
			return mustClaim(t, alpha.svc, alice, "assert", jsonOf(map[string]any{"thread": thread, "statement": statement,
				"evidence": []any{map[string]any{"kind": "url", "ref": "https://ci.example.org/run/7"}}, "valid_until": validUntil.Format(time.RFC3339),
				"provenance": map[string]any{"model": "model-a", "client": "client-a"}}))
		}
		evidence := func(ref string) map[string]any {
			return map[string]any{"evidence": []protocol.Evidence{{Kind: "log", Ref: ref}}, "provenance": map[string]any{"model": "model-b"}}
		}
		build := assert(th, "the build passes on main", time.Now().Add(24*time.Hour))
		build = signStance(t, alpha, bob, "attest", build, evidence("PASS"))
		build = signStance(t, alpha, vera, "verify", build, map[string]any{"note": "ran it"})
		mirror := assert(th, "the mirror is fresh", time.Now().Add(time.Hour))
		signStance(t, alpha, bob, "attest", mirror, evidence("synced"))
		expiredAt := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
		setTimes(t, alpha, mirror.ID, expiredAt.Add(-3*time.Hour), &expiredAt, expiredAt.Add(-2*time.Hour))
		long := send(t, alpha.svc, alice, envelope("ask", "", "What did the audit find?")).Thread.ID
		assert(long, strings.Repeat("the audit found more than beta's statements may say. ", 4), time.Now().Add(time.Hour))
		inAlpha := map[string]map[string]any{build.ID: claimJSON(t, alpha, build.ID), mirror.ID: claimJSON(t, alpha, mirror.ID)}

		// Beta takes statements of at most 150 characters and trusts alpha.
		betaLimits := generous()
		betaLimits.BodyMaxChars = 150
		beta := openRealm(t, db.Kind(), "beta", betaLimits, map[string]string{"alpha": alpha.did})
		longID, _ := protocol.ParseIDString(long, "th_")
		before := beta.record(t)
		_, err := beta.importInto(alpha.export(t, "json", longID))
		if e := wantRefused(t, err, protocol.ReasonInvalidBody); e != nil && !strings.Contains(e.Message, "field statement has 212 characters; at most 150") {
			t.Errorf("beta refuses alpha's long claim with %q", e.Message)
		}
		if beta.record(t) != before {
			t.Error("the refused import changed beta")
		}
		thID, _ := protocol.ParseIDString(th, "th_")
		startB := time.Now().UTC().Truncate(time.Microsecond)
		intoB, err := beta.importInto(alpha.export(t, "json", thID))
		if err != nil {
			t.Fatal(err)
		}
		inBeta := map[string]map[string]any{}
		for _, c := range intoB.Claims {
			inBeta[c.Origin.Claim] = claimJSON(t, beta, c.ID)
		}
		keeps(t, "beta", inBeta, inAlpha, th, startB)
		// Carol attests alpha's build in beta, signed; dan refutes the mirror, unsigned.
		carol := newSigner(t, beta.svc, beta.agent("carol"), 'c')
		local := mustClaim(t, beta.svc, reader, "read", `{"claim":"`+inBeta[build.ID]["id"].(string)+`"}`)
		signStance(t, beta, carol, "attest", local, map[string]any{"evidence": []protocol.Evidence{{Kind: "log", Ref: "PASS on beta"}},
			"provenance": map[string]any{"client": "client-c"}})
		mustClaim(t, beta.svc, beta.agent("dan"), "refute", `{"claim":"`+inBeta[mirror.ID]["id"].(string)+`","evidence":[{"kind":"log","ref":"stale"}],"body":"stale since noon"}`)
		for id := range inBeta {
			inBeta[id] = claimJSON(t, beta, inBeta[id]["id"].(string))
		}
		// Beta's exports carry alpha's bindings of bob's and vera's keys and beta's own of
		// carol's: they verify pinned to those two realms' keys.
		fromBeta := beta.export(t, protocol.FormatJSONL, 0)
		signersB := map[string]string{"beta": beta.did, "alpha": alpha.did}
		custodyBy(t, "beta", signersB, func() (*graph.CustodyReport, error) { return graph.CheckDataset(bytes.NewReader(fromBeta)) })
		custodyBy(t, "beta", signersB, func() (*graph.CustodyReport, error) { return graph.CheckCustody(beta.export(t, "json", 0)) })

		// Gamma trusts alpha and beta, and takes beta's dataset.
		gamma := openRealm(t, db.Kind(), "gamma", generous(), map[string]string{"alpha": alpha.did, "beta": beta.did})
		// Beta's operator cannot speak for alpha's identities: an unsigned stance of alpha's
		// mallory added to beta's export, signed again by beta's realm key, is refused whole.
		forged := forge(t, beta, beta.export(t, "json", 0), func(top map[string]any) {
			addTo(exportedClaim(t, top, inBeta[build.ID]["id"].(string)), "refutations", map[string]any{"id": "ref_9",
				"by": map[string]any{"identity": "alpha:mallory", "extension": ""}, "evidence": []any{map[string]any{"kind": "log", "ref": "FAIL"}},
				"body": "it fails", "at": "2026-12-01T11:00:00Z"})
		})
		_, err = gamma.importInto(forged)
		if e := wantRefused(t, err, protocol.ReasonInvalidBody); e != nil && !strings.Contains(e.Message, "ref_9 by alpha:mallory") {
			t.Errorf("gamma refuses beta's forged export with %q", e.Message)
		}
		if n := len(allThreads(t, gamma.svc)); n != 0 {
			t.Fatalf("the refused import wrote %d threads into gamma", n)
		}
		startC := time.Now().UTC().Truncate(time.Microsecond)
		intoC, err := gamma.importInto(fromBeta)
		if err != nil {
			t.Fatal(err)
		}
		inGamma := map[string]map[string]any{}
		for _, c := range intoC.Claims {
			inGamma[c.Origin.Claim] = claimJSON(t, gamma, c.ID)
		}
		keeps(t, "gamma", inGamma, inBeta, th, startC)
		if gamma, beta := inGamma[build.ID]["origin"].(map[string]any)["imported_at"], inBeta[build.ID]["origin"].(map[string]any)["imported_at"]; gamma == beta {
			t.Errorf("gamma's import of alpha's claim is dated %v, beta's", gamma)
		}
		if got := inGamma[mirror.ID]; got["state"] != string(protocol.ClaimRefuted) || got["certainty"] != string(protocol.ClaimRefuted) || got["expired"] != true {
			t.Errorf("gamma reads the refuted, expired mirror as %s, %s, expired %v", got["state"], got["certainty"], got["expired"])
		}
		signersC := map[string]string{"gamma": gamma.did, "beta": beta.did, "alpha": alpha.did}
		custodyBy(t, "gamma", signersC, func() (*graph.CustodyReport, error) { return graph.CheckCustody(gamma.export(t, "json", 0)) })
		custodyBy(t, "gamma", signersC, func() (*graph.CustodyReport, error) {
			return graph.CheckDataset(bytes.NewReader(gamma.export(t, protocol.FormatJSONL, 0)))
		})
	})
}

// keeps checks that the claims got (by their origin's id) say what want (the same claims in
// the forum they came from) says: statement, times, validity, provenance, evidence, authors,
// every stance with its time, provenance and document; and that their origin is alpha's,
// imported at or after start.
func keeps(t *testing.T, realm string, got, want map[string]map[string]any, thread string, start time.Time) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s holds %d of the claims, not %d", realm, len(got), len(want))
	}
	for id, w := range want {
		g := got[id]
		for _, field := range []string{"statement", "created_at", "valid_until", "expired", "provenance", "evidence", "asserted_by"} {
			if jsonOf(g[field]) != jsonOf(w[field]) {
				t.Errorf("%s's %s has %s %s, not %s", realm, id, field, jsonOf(g[field]), jsonOf(w[field]))
			}
		}
		for _, list := range []string{"attestations", "refutations", "verifications"} {
			gs, ws := g[list].([]any), w[list].([]any)
			if len(gs) != len(ws) {
				t.Errorf("%s's %s has %d %s, not %d", realm, id, len(gs), list, len(ws))
				continue
			}
			for i := range gs {
				a, b := gs[i].(map[string]any), ws[i].(map[string]any)
				for _, field := range []string{"by", "at", "provenance", "evidence", "note", "body", "document"} {
					if jsonOf(a[field]) != jsonOf(b[field]) {
						t.Errorf("%s's %s: %s %v has %s %s, not %s", realm, id, list, a["id"], field, jsonOf(a[field]), jsonOf(b[field]))
					}
				}
			}
		}
		origin, _ := g["origin"].(map[string]any)
		at, err := time.Parse(time.RFC3339Nano, stringOf(origin["imported_at"]))
		if origin["realm"] != "alpha" || origin["claim"] != id || origin["thread"] != thread || err != nil || at.Before(start) {
			t.Errorf("%s's %s has the origin %v (the import began %v)", realm, id, origin, start)
		}
	}
}

// custodyBy checks an export of realm as parley verify-export checks it: every proof holds,
// its own by realm's key (signers[realm]); pinned to the keys of the realms whose keys signed
// it (signers: --trust-realm NAME=DID for each, or --realm-key DID for each), it still holds;
// pinned to another key for realm — an export re-signed under another realm key — it fails;
// and pinned to realm's own key alone, a binding another realm made fails.
func custodyBy(t *testing.T, realm string, signers map[string]string, check func() (*graph.CustodyReport, error)) {
	t.Helper()
	report := func(e graph.ExpectedRealms) (*graph.CustodyReport, string) {
		t.Helper()
		r, err := check()
		if err != nil {
			t.Fatal(err)
		}
		r.Expect(e)
		var lines []string
		for _, l := range r.Lines {
			lines = append(lines, l.What+": "+errText(l.Err))
		}
		return r, strings.Join(lines, "\n")
	}
	did := signers[realm]
	r, text := report(graph.ExpectedRealms{})
	if r.Failed() != 0 || r.Signer != did || !strings.Contains(text, "export proof of realm "+realm+" by "+did+": ok") {
		t.Errorf("the check of %s's export (%d fail, signed by %s):\n%s", realm, r.Failed(), r.Signer, text)
	}
	var keys []string
	for _, k := range signers {
		keys = append(keys, k)
	}
	for _, pinned := range []graph.ExpectedRealms{{Named: signers}, {Keys: keys}} {
		if r, text := report(pinned); r.Failed() != 0 || r.ExpectFailure(pinned) != "" {
			t.Errorf("the check of %s's export pinned to %s: %d fail, %q\n%s", realm, pinned, r.Failed(), r.ExpectFailure(pinned), text)
		}
	}
	for name, other := range signers {
		if name == realm {
			continue
		}
		// Another realm's key in place of realm's: the export's own proof is not the one pinned.
		wrong := graph.ExpectedRealms{Named: map[string]string{realm: other}}
		if r, text := report(wrong); r.ExpectFailure(wrong) == "" || r.Failed() == 0 {
			t.Errorf("the check of %s's export pinned to %s holds:\n%s", realm, wrong, text)
		}
	}
	// Realm's own key alone: the bindings the other realms made fail.
	alone := graph.ExpectedRealms{Keys: []string{did}}
	if r, text := report(alone); len(signers) > 1 && (r.Failed() == 0 || !strings.Contains(text, "not by an expected realm key: "+did)) {
		t.Errorf("the check of %s's export pinned to its own key alone holds:\n%s", realm, text)
	}
}
