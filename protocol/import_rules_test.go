package protocol_test

import (
	"strings"
	"testing"

	"github.com/parleyforum/parley/protocol"
	"github.com/parleyforum/parley/storage"
	"github.com/parleyforum/parley/storage/storagetest"
)

// An import obeys this forum's rules (§ 14): every claim and stance it would write passes the
// checks of a live assert, attest, refute or verify here — lengths, evidence kinds and ref
// forms, counts, a stance's own evidence, no self-attestation, one attestation per identity,
// thread_max_claims and claim_max_stances. Alpha's export (signed again by alpha's realm key,
// so that its custody holds) carries one item that beta's rules refuse: the whole import is
// refused with the reason the live write would get, naming the item, and beta is as it was.
func TestImportObeysThisForumsRules(t *testing.T) {
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		alpha := openRealm(t, db.Kind(), "alpha", generous(), nil)
		alice := alpha.agent("alice")
		th := send(t, alpha.svc, alice, envelope("ask", "", "Does the build pass?")).Thread.ID
		mustClaim(t, alpha.svc, alice, "assert", `{"thread":"`+th+`","statement":"the build passes on main","evidence":[{"kind":"log","ref":"PASS"}]}`)
		export := alpha.export(t, "json", 0)

		item := func(kind, ref string) map[string]any { return map[string]any{"kind": kind, "ref": ref} }
		by := func(identity string) map[string]any { return map[string]any{"identity": identity, "extension": ""} }
		// claim is one more claim of alice's in alpha's export, as edit makes it.
		claim := func(edit func(c map[string]any)) func(top map[string]any) {
			return func(top map[string]any) {
				c := map[string]any{"id": "cl_9", "thread": th, "statement": "the tests pass on main", "asserted_by": by("alpha:alice"),
					"evidence": []any{item("log", "ok")}, "created_at": "2026-12-01T10:00:00Z",
					"attestations": []any{}, "refutations": []any{}, "verifications": []any{}}
				edit(c)
				addTo(top, "claims", c)
			}
		}
		// stance adds one stance of the list (attestations, refutations, verifications) to the
		// claim, by identity, with fields.
		stance := func(list, id, identity string, fields map[string]any) func(c map[string]any) {
			return func(c map[string]any) {
				st := map[string]any{"id": id, "by": by(identity), "evidence": []any{item("log", "seen")}, "at": "2026-12-01T11:00:00Z"}
				if list == "refutations" {
					st["body"] = "it does not"
				}
				for k, v := range fields {
					if v == nil {
						delete(st, k)
					} else {
						st[k] = v
					}
				}
				addTo(c, list, st)
			}
		}
		many := func(n int, one func(i int) any) []any {
			out := make([]any, n)
			for i := range out {
				out[i] = one(i)
			}
			return out
		}
		both := func(edits ...func(c map[string]any)) func(c map[string]any) {
			return func(c map[string]any) {
				for _, e := range edits {
					e(c)
				}
			}
		}
		limits := func(edit func(l *protocol.Limits)) protocol.Limits {
			l := generous()
			edit(&l)
			return l
		}

		cases := []struct {
			name   string
			limits protocol.Limits
			edit   func(top map[string]any)
			reason protocol.Reason
			want   string
		}{
			{"a statement over body_max_chars", generous(), claim(func(c map[string]any) { c["statement"] = strings.Repeat("x", 501) }),
				protocol.ReasonInvalidBody, "claim cl_9 of realm alpha: field statement has 501 characters; at most 500"},
			{"a statement of 128 KiB", generous(), claim(func(c map[string]any) { c["statement"] = strings.Repeat("x", 128<<10) }),
				protocol.ReasonInvalidBody, "claim cl_9 of realm alpha: field statement has 131072 characters"},
			{"an empty statement", generous(), claim(func(c map[string]any) { c["statement"] = " " }),
				protocol.ReasonInvalidBody, "claim cl_9 of realm alpha: field statement is empty"},
			{"an evidence kind this forum has not", generous(), claim(func(c map[string]any) { c["evidence"] = []any{item("weird", "x")} }),
				protocol.ReasonInvalidBody, "claim cl_9 of realm alpha: field evidence[0].kind must be one of"},
			{"a javascript: URL", generous(), claim(func(c map[string]any) { c["evidence"] = []any{item("url", "javascript:alert(1)")} }),
				protocol.ReasonInvalidBody, "field evidence[0].ref of kind url must be an absolute http(s) URL"},
			{"a hash that is none", generous(), claim(func(c map[string]any) { c["evidence"] = []any{item("hash", "md5:abc")} }),
				protocol.ReasonInvalidBody, "field evidence[0].ref of kind hash must be"},
			{"more evidence than evidence_max_items", generous(), claim(func(c map[string]any) {
				c["evidence"] = many(17, func(int) any { return item("log", "x") })
			}), protocol.ReasonInvalidBody, "field evidence has 17 items; at most 16"},
			{"a ref over evidence_ref_max_chars", generous(), claim(func(c map[string]any) { c["evidence"] = []any{item("log", strings.Repeat("r", 2049))} }),
				protocol.ReasonInvalidBody, "field evidence[0].ref has 2049 characters; at most 2048"},
			{"an evidence item with a member of its own", generous(), claim(func(c map[string]any) {
				c["evidence"] = []any{map[string]any{"kind": "log", "ref": "x", "score": 10}}
			}), protocol.ReasonInvalidBody, "unknown field evidence[0].score"},
			{"a claim without evidence", generous(), claim(func(c map[string]any) { c["evidence"] = []any{} }),
				protocol.ReasonInvalidBody, "claim cl_9 of realm alpha: field evidence is empty"},
			{"a provenance over provenance_field_max_chars", generous(), claim(func(c map[string]any) {
				c["provenance"] = map[string]any{"model": strings.Repeat("m", 201)}
			}), protocol.ReasonInvalidBody, "field provenance.model has 201 characters; at most 200"},
			{"an extension that is none", generous(), claim(func(c map[string]any) {
				c["asserted_by"] = map[string]any{"identity": "alpha:alice", "extension": "two words"}
			}), protocol.ReasonInvalidBody, "claim cl_9 of realm alpha: field from.extension"},
			{"a claim without created_at", generous(), claim(func(c map[string]any) { delete(c, "created_at") }),
				protocol.ReasonInvalidBody, "claim cl_9 of realm alpha: it carries no created_at"},
			{"an attestation without evidence", generous(), claim(stance("attestations", "att_7", "alpha:carol", map[string]any{"evidence": []any{}})),
				protocol.ReasonInvalidBody, "att_7 by alpha:carol on claim cl_9 of realm alpha: field evidence is empty"},
			{"an attestation's note over 500", generous(), claim(stance("attestations", "att_7", "alpha:carol", map[string]any{"note": strings.Repeat("n", 501)})),
				protocol.ReasonInvalidBody, "att_7 by alpha:carol on claim cl_9 of realm alpha: field note has 501 characters"},
			{"a refutation's body over body_max_chars", generous(), claim(stance("refutations", "ref_7", "alpha:carol", map[string]any{"body": strings.Repeat("b", 501)})),
				protocol.ReasonInvalidBody, "ref_7 by alpha:carol on claim cl_9 of realm alpha: field body has 501 characters; at most 500"},
			{"a refutation without body", generous(), claim(stance("refutations", "ref_7", "alpha:carol", map[string]any{"body": nil})),
				protocol.ReasonInvalidBody, "ref_7 by alpha:carol on claim cl_9 of realm alpha: field body is missing"},
			{"a refutation with a note", generous(), claim(stance("refutations", "ref_7", "alpha:carol", map[string]any{"note": "also"})),
				protocol.ReasonInvalidBody, "unknown field note"},
			{"a verification citing a javascript: URL", generous(), claim(stance("verifications", "ver_7", "alpha:vera", map[string]any{"evidence": []any{item("url", "javascript:x")}})),
				protocol.ReasonInvalidBody, "ver_7 by alpha:vera on claim cl_9 of realm alpha: field evidence[0].ref of kind url"},
			{"a stance without at", generous(), claim(stance("attestations", "att_7", "alpha:carol", map[string]any{"at": nil})),
				protocol.ReasonInvalidBody, "att_7 by alpha:carol on claim cl_9 of realm alpha: it carries no at"},
			{"an attestation of one's own claim", generous(), claim(stance("attestations", "att_7", "alpha:alice", nil)),
				protocol.ReasonSelfAttestation, "att_7 by alpha:alice on claim cl_9 of realm alpha: alpha:alice attesting its own claim is not allowed"},
			{"two attestations by one identity", generous(), claim(both(stance("attestations", "att_7", "alpha:carol", nil), stance("attestations", "att_8", "alpha:carol", nil))),
				protocol.ReasonAlreadyAttested, "att_8 by alpha:carol on claim cl_9 of realm alpha: alpha:carol takes this stance on claim cl_9 a second time"},
			{"more stances than claim_max_stances", limits(func(l *protocol.Limits) { l.ClaimMaxStances = 2 }),
				claim(both(stance("attestations", "att_6", "alpha:carol", nil), stance("attestations", "att_7", "alpha:dan", nil), stance("attestations", "att_8", "alpha:erin", nil))),
				protocol.ReasonLimitExceeded, "claim_max_stances (2)"},
			{"more claims than thread_max_claims", limits(func(l *protocol.Limits) { l.ThreadMaxClaims = 1 }), claim(func(map[string]any) {}),
				protocol.ReasonLimitExceeded, "thread_max_claims (1)"},
		}
		for _, c := range cases {
			t.Run(strings.ReplaceAll(c.name, " ", "_"), func(t *testing.T) {
				beta := openRealm(t, db.Kind(), "beta", c.limits, map[string]string{"alpha": alpha.did})
				before := beta.record(t)
				_, err := beta.importInto(forge(t, alpha, export, c.edit))
				if e := wantRefused(t, err, c.reason); e != nil && !strings.Contains(e.Message, c.want) {
					t.Errorf("the refusal %q does not say %q", e.Message, c.want)
				}
				if after := beta.record(t); after != before {
					t.Errorf("the refused import changed beta:\n%s\n→\n%s", before, after)
				}
			})
		}

		// The same claim with stances that obey the rules lands; an artifact ref this store
		// lacks is kept as a pointer, marked present: false.
		const missing = "sha256:0000000000000000000000000000000000000000000000000000000000000001"
		beta := openRealm(t, db.Kind(), "beta", generous(), map[string]string{"alpha": alpha.did})
		res, err := beta.importInto(forge(t, alpha, export, claim(both(
			func(c map[string]any) {
				c["evidence"] = []any{item("artifact", missing), item("url", "https://ci.example.org/run/7")}
			},
			stance("attestations", "att_7", "alpha:carol", nil), stance("refutations", "ref_8", "alpha:dan", nil)))))
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Claims) != 2 || res.Stances != 2 {
			t.Fatalf("the import answered %+v", res)
		}
		got := claimJSON(t, beta, res.Claims[1].ID)
		evidence := got["evidence"].([]any)
		if a := evidence[0].(map[string]any); a["ref"] != missing || a["present"] != false {
			t.Errorf("the artifact this store lacks reads %v", a)
		}
		if u := evidence[1].(map[string]any); u["present"] != nil {
			t.Errorf("a url reads %v", u)
		}
	})
}
