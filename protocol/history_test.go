package protocol_test

import (
	"bytes"
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/parleyforum/parley/protocol"
	"github.com/parleyforum/parley/storage"
	"github.com/parleyforum/parley/storage/storagetest"
)

// TestHistoryIsAppendOnly is § 15's append-only record: a mark does not rewrite supersession,
// every claim event names its cause, the seal keeps its quorum, stances carry provenance.
func TestHistoryIsAppendOnly(t *testing.T) {
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		svc := newService(t, db)
		alice, bob := agent("alice", "read,write"), agent("bob", "read,write")
		ver := agent("vera", "read,verify")
		ada := human("ada")
		th := send(t, svc, alice, envelope("ask", "", "Which port?")).Thread.ID
		assert := func(statement string, more string) *protocol.ClaimView {
			return mustClaim(t, svc, alice, "assert", `{"thread":"`+th+`","statement":"`+statement+`","evidence":`+proof+more+`}`)
		}
		a, b := assert("8080", ""), assert("8081", "")
		c := assert("8082", `,"supersedes":["`+a.ID+`","`+b.ID+`"]`)
		mustClaim(t, svc, ada, "mark", `{"claim":"`+a.ID+`","state":"supported"}`)
		c = mustClaim(t, svc, reader, "read", `{"claim":"`+c.ID+`"}`)
		if !slices.Equal(c.Supersedes, []string{a.ID, b.ID}) {
			t.Errorf("after a mark of %s, %s supersedes %v", a.ID, c.ID, c.Supersedes)
		}
		a = mustClaim(t, svc, reader, "read", `{"claim":"`+a.ID+`"}`)
		if a.SupersededBy == nil || *a.SupersededBy != c.ID || a.State != "supported" {
			t.Errorf("%s after its mark: state %s, superseded_by %v", a.ID, a.State, a.SupersededBy)
		}
		// Superseded once, it is not superseded again.
		_, err := claimOp(svc, alice, "assert", `{"thread":"`+th+`","statement":"x","evidence":`+proof+`,"supersedes":["`+a.ID+`"]}`)
		wantRefused(t, err, protocol.ReasonInvalidTransition)

		// Stances: ids, provenance, and events that name them.
		d := assert("9090", "")
		att := mustClaim(t, svc, bob, "attest", `{"claim":"`+d.ID+`","evidence":`+proof+`,"provenance":{"model":"m-1","client":"c-1"}}`).Attestations[0]
		if att.Provenance == nil || *att.Provenance.Model != "m-1" || *att.Provenance.Client != "c-1" {
			t.Errorf("attestation provenance %+v", att.Provenance)
		}
		// Every export format carries the provenance where it carries the author.
		for _, format := range []string{"json", "graphml", "dot"} {
			var buf bytes.Buffer
			if err := svc.WriteExport(context.Background(), 0, format, &buf); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(buf.String(), "m-1") || !strings.Contains(buf.String(), "c-1") {
				t.Errorf("the %s export lacks the attestation's provenance", format)
			}
		}
		sealed := mustClaim(t, svc, ver, "verify", `{"claim":"`+d.ID+`"}`)
		if sealed.State != "verified" || sealed.Quorum.Of != 1 || sealed.Quorum.Verifiers != 1 {
			t.Errorf("sealed: %s %+v", sealed.State, sealed.Quorum)
		}
		stances := map[string]string{} // event act on d → stance
		var supersededBy []string
		for _, ev := range events(t, svc, th) {
			switch {
			case ev.Subject == d.ID && (ev.Act == "attest" || ev.Act == "verify"):
				if ev.Stance == nil {
					t.Errorf("event %s (%s) names no stance", ev.ID, ev.Act)
					continue
				}
				stances[ev.Act] = *ev.Stance
			case ev.Act == "supersede":
				if ev.Claim != nil {
					supersededBy = append(supersededBy, ev.Subject+">"+*ev.Claim)
				}
			}
		}
		if stances["attest"] != att.ID || stances["verify"] != sealed.Verifications[0].ID || att.ID[:4] != "att_" || sealed.Verifications[0].ID[:4] != "ver_" {
			t.Errorf("events name stances %v; the claim has %s and %s", stances, att.ID, sealed.Verifications[0].ID)
		}
		if !slices.Equal(supersededBy, []string{a.ID + ">" + c.ID, b.ID + ">" + c.ID}) {
			t.Errorf("supersede events name %v", supersededBy)
		}

		// The quorum in force at sealing stays, whatever the reader's limit is now.
		l := generous()
		l.VerifyQuorum = 3
		later := protocol.New(db, protocol.Options{Limits: l})
		if got := mustClaim(t, later, reader, "read", `{"claim":"`+d.ID+`"}`); got.Quorum.Of != 1 {
			t.Errorf("a claim sealed at quorum 1 reads quorum %+v under a limit of 3", got.Quorum)
		}
		if got := mustClaim(t, later, reader, "read", `{"claim":"`+a.ID+`"}`); got.Quorum.Of != 3 {
			t.Errorf("an unsealed claim reads quorum %+v, want the limit in force (3)", got.Quorum)
		}
	})
}
