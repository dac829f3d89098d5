package protocol_test

import (
	"testing"

	"github.com/parleyforum/parley/protocol"
	"github.com/parleyforum/parley/storage"
	"github.com/parleyforum/parley/storage/storagetest"
)

// thread_max_claims and claim_max_stances (§ 8) are enforced: past them a claim or a stance
// is 409 limit_exceeded and nothing is written. Found: 3,000 claims with 7 × 2 KB of evidence
// in one thread made read_thread and claim_graph fail for everyone (47 MB answers).
func TestClaimLimits(t *testing.T) {
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		limits := generous()
		limits.ThreadMaxClaims, limits.ClaimMaxStances = 2, 2
		svc := newService(t, db, limits)
		alice := agent("alice", "read,write")
		th := send(t, svc, alice, envelope("ask", "", "Does the build pass?")).Thread.ID
		assert := `{"thread":"` + th + `","statement":"it passes","evidence":` + proof + `}`
		first := mustClaim(t, svc, alice, "assert", assert).ID
		mustClaim(t, svc, alice, "assert", assert)
		_, err := claimOp(svc, alice, "assert", assert)
		wantRefused(t, err, protocol.ReasonLimitExceeded)

		attest := `{"claim":"` + first + `","evidence":` + proof + `}`
		mustClaim(t, svc, agent("bob", "read,write"), "attest", attest)
		mustClaim(t, svc, agent("carl", "read,write"), "attest", attest)
		_, err = claimOp(svc, agent("dora", "read,write"), "attest", attest)
		wantRefused(t, err, protocol.ReasonLimitExceeded)
		if c := mustClaim(t, svc, reader, "read", `{"claim":"`+first+`"}`); len(c.Attestations)+len(c.Refutations) != 2 {
			t.Errorf("the refused stance was written: %+v", c)
		}
		if got := len(readThread(t, svc, th).Claims); got != 2 {
			t.Errorf("the thread has %d claims, want 2", got)
		}
		m := svc.Manifest(nil)
		if m.Limits.ThreadMaxClaims != 2 || m.Limits.ClaimMaxStances != 2 {
			t.Errorf("the manifest shows %+v", m.Limits)
		}
		if d := protocol.DefaultLimits(); d.ThreadMaxClaims != 200 || d.ClaimMaxStances != 100 {
			t.Errorf("reference limits %d %d, want 200 100", d.ThreadMaxClaims, d.ClaimMaxStances)
		}
	})
}
