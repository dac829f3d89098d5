package protocol_test

import (
	"testing"
	"time"

	"github.com/parleyforum/parley/protocol"
	"github.com/parleyforum/parley/storage"
	"github.com/parleyforum/parley/storage/storagetest"
)

// § 12: every claim change is an event of its thread (subject cl_…) with origin, label, time
// and confirmation; a model's claim state is a proposal, a lock holder's and a human's are
// confirmed; a human's mark has origin user.
func TestClaimEvents(t *testing.T) {
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		svc := newService(t, db)
		a := claimActors
		th := send(t, svc, a["alice"], `{"kind":"ask","body":"Which port?"}`).Thread.ID
		c1 := mustClaim(t, svc, a["alice"], "assert", `{"thread":"`+th+`","from":{"extension":"w1"},"statement":"8080","evidence":`+proof+`}`)
		mustClaim(t, svc, a["mod"], "attest", `{"claim":"`+c1.ID+`","evidence":`+proof+`}`)
		mustClaim(t, svc, a["bob"], "attest", `{"claim":"`+c1.ID+`","evidence":`+proof+`}`)
		c2 := mustClaim(t, svc, a["alice"], "assert", `{"thread":"`+th+`","statement":"8081","evidence":`+proof+`,"supersedes":["`+c1.ID+`"]}`)
		mustClaim(t, svc, a["ada"], "mark", `{"claim":"`+c2.ID+`","state":"refuted"}`)

		_, evs := splitEvents(events(t, svc, th), th)
		type row struct{ subject, act, from, to, origin, label string }
		want := []row{
			{c1.ID, "assert", "", "unverified", "llm", "ainotes:alice"},
			{c1.ID, "attest", "unverified", "supported", "llm", "KI · mod"},
			{c1.ID, "attest", "supported", "supported", "llm", "ainotes:bob"},
			{c2.ID, "assert", "", "unverified", "llm", "ainotes:alice"},
			{c1.ID, "supersede", "supported", "superseded", "llm", "ainotes:alice"},
			{c2.ID, "mark", "unverified", "refuted", "user", "human:ada"},
		}
		confirmed := []bool{false, true, false, false, false, true}
		if len(evs) != len(want) {
			t.Fatalf("%d claim events, want %d:\n%s", len(evs), len(want), jsonOf(evs))
		}
		for i, ev := range evs {
			from := ""
			if ev.From != nil {
				from = string(*ev.From)
			}
			got := row{ev.Subject, ev.Act, from, string(ev.To), ev.Origin, ev.Label}
			if got != want[i] || ev.Confirmed != confirmed[i] || ev.Thread != th || ev.At.IsZero() {
				t.Errorf("event %d: %+v confirmed %v, want %+v confirmed %v", i, got, ev.Confirmed, want[i], confirmed[i])
			}
		}
		if evs[0].Actor.Extension != "w1" {
			t.Errorf("the assert's actor is %+v, want extension w1", evs[0].Actor)
		}
		// The mod's attestation confirmed supported; bob's added support and left it so.
		if got := mustClaim(t, svc, reader, "read", `{"claim":"`+c2.ID+`"}`); got.StateOrigin != "user" || !got.Confirmed {
			t.Errorf("the marked claim reads origin %s confirmed %v", got.StateOrigin, got.Confirmed)
		}
	})
}

// § 12: expired is derived at read time from valid_until; an expired claim can no longer be
// attested or verified, and shows its certainty apart, until it is refuted.
func TestClaimExpires(t *testing.T) {
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		t.Parallel()
		svc := newService(t, db)
		a := claimActors
		th := send(t, svc, a["alice"], `{"kind":"ask","body":"Which port?"}`).Thread.ID
		until := time.Now().Add(2 * time.Second).UTC().Format(time.RFC3339Nano) // room for a loaded machine
		c := mustClaim(t, svc, a["alice"], "assert", `{"thread":"`+th+`","statement":"8080 today","evidence":`+proof+`,"valid_until":"`+until+`"}`)
		if c.Expired || c.ValidUntil == nil {
			t.Fatalf("a fresh claim reads expired %v, valid_until %v", c.Expired, c.ValidUntil)
		}
		time.Sleep(time.Until(*c.ValidUntil) + 10*time.Millisecond)
		got := mustClaim(t, svc, reader, "read", `{"claim":"`+c.ID+`"}`)
		if !got.Expired || got.Certainty != protocol.CertaintyExpired || got.State != protocol.ClaimUnverified {
			t.Errorf("past valid_until the claim reads expired %v, certainty %s, state %s", got.Expired, got.Certainty, got.State)
		}
		_, err := claimOp(svc, a["bob"], "attest", `{"claim":"`+c.ID+`","evidence":`+proof+`}`)
		wantRefused(t, err, protocol.ReasonInvalidTransition)
		// A refutation still lands: proof against a claim is never too late. The claim then
		// shows how it ended, refuted, though expired (one precedence rule, Certainty), in
		// its read and in the graph.
		mustClaim(t, svc, a["bob"], "refute", `{"claim":"`+c.ID+`","evidence":`+proof+`,"body":"8081"}`)
		got = mustClaim(t, svc, reader, "read", `{"claim":"`+c.ID+`"}`)
		if !got.Expired || got.Certainty != string(protocol.ClaimRefuted) {
			t.Errorf("a refuted claim past valid_until reads expired %v, certainty %s, want refuted", got.Expired, got.Certainty)
		}
		for _, n := range graphOf(t, svc, `{"thread":"`+th+`"}`).Nodes {
			if n.ID == c.ID && (n.Certainty != "refuted" || n.Expired == nil || !*n.Expired) {
				t.Errorf("the graph shows the refuted, expired claim as certainty %s, expired %v", n.Certainty, n.Expired)
			}
		}
	})
}
