package protocol_test

import (
	"fmt"
	"testing"

	"github.com/parleyforum/parley/protocol"
	"github.com/parleyforum/parley/storage"
	"github.com/parleyforum/parley/storage/storagetest"
)

// § 13 quorum on both databases: with verify_quorum N the N-th distinct verifier seals, a
// claim reads "k of N" as it goes, and no verifier counts twice.
func TestQuorum(t *testing.T) {
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		for _, quorum := range []int{1, 2, 3} {
			t.Run(fmt.Sprintf("verify_quorum %d", quorum), func(t *testing.T) {
				limits := generous()
				limits.VerifyQuorum = quorum
				svc := newService(t, db, limits)
				alice, bob := agent("alice", "read,write"), agent("bob", "read,write")
				th := send(t, svc, alice, envelope("ask", "", "Is the port 8080?")).Thread.ID
				claim := mustClaim(t, svc, alice, "assert", `{"thread":"`+th+`","statement":"8080","evidence":`+proof+`}`)
				if claim.Quorum != (protocol.Quorum{Verifiers: 0, Of: quorum}) {
					t.Errorf("a new claim reads %+v, want 0 of %d", claim.Quorum, quorum)
				}
				mustClaim(t, svc, bob, "attest", `{"claim":"`+claim.ID+`","evidence":`+proof+`}`)
				verify := `{"claim":"` + claim.ID + `"}`
				for k := 1; k <= quorum; k++ {
					verifier := agent(fmt.Sprintf("verifier%d", k), "read,verify")
					got := mustClaim(t, svc, verifier, "verify", verify)
					want := protocol.ClaimSupported
					if k == quorum {
						want = protocol.ClaimVerified
					}
					if got.State != want || got.Quorum != (protocol.Quorum{Verifiers: k, Of: quorum}) {
						t.Errorf("after verifier %d: %s, %+v; want %s, %d of %d", k, got.State, got.Quorum, want, k, quorum)
					}
					// The same verifier again, from another extension: refused, nothing counted.
					_, err := claimOp(svc, verifier, "verify", `{"claim":"`+claim.ID+`","from":{"extension":"w2"}}`)
					wantRefused(t, err, protocol.ReasonAlreadyAttested)
				}
				read := mustClaim(t, svc, reader, "read", verify)
				if read.Quorum != (protocol.Quorum{Verifiers: quorum, Of: quorum}) || len(read.Verifications) != quorum {
					t.Errorf("the sealed claim reads %+v with %d verifications", read.Quorum, len(read.Verifications))
				}
				if claims := readThread(t, svc, th).Claims; len(claims) != 1 || claims[0].Quorum != read.Quorum {
					t.Errorf("read_thread gives the claim's quorum as %+v, read_claim as %+v", claims[0].Quorum, read.Quorum)
				}
			})
		}
	})
}
