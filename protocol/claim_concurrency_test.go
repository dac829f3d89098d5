package protocol_test

import (
	"fmt"
	"sync"
	"testing"

	"github.com/parleyforum/parley/protocol"
	"github.com/parleyforum/parley/storage"
	"github.com/parleyforum/parley/storage/storagetest"
)

// Concurrent stances on one claim take turns on its thread: of one identity's simultaneous
// attestations exactly one is accepted (the rest already_attested), and with verify_quorum 3
// exactly the third of three simultaneous verifiers seals it, no stance lost.
func TestClaimStancesConcurrently(t *testing.T) {
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		limits := generous()
		limits.VerifyQuorum = 3
		svc := newService(t, db, limits)
		th := send(t, svc, claimActors["alice"], `{"kind":"ask","body":"Which port?"}`).Thread.ID
		c := mustClaim(t, svc, claimActors["alice"], "assert", `{"thread":"`+th+`","statement":"8080","evidence":`+proof+`}`).ID

		run := func(n int, actor func(i int) *protocol.Actor, op string) map[string]int {
			var mu sync.Mutex
			outcomes := map[string]int{}
			var wg sync.WaitGroup
			for i := range n {
				wg.Add(1)
				go func() {
					defer wg.Done()
					_, err := claimOp(svc, actor(i), op, fmt.Sprintf(`{"claim":"%s","evidence":%s,"from":{"extension":"w%d"}}`, c, proof, i))
					outcome := "ok"
					if e, ok := protocol.AsError(err); ok {
						outcome = string(e.Reason)
					} else if err != nil {
						outcome = err.Error()
					}
					mu.Lock()
					outcomes[outcome]++
					mu.Unlock()
				}()
			}
			wg.Wait()
			return outcomes
		}
		bob := claimActors["bob"]
		if got := run(6, func(int) *protocol.Actor { return bob }, "attest"); got["ok"] != 1 || got["already_attested"] != 5 {
			t.Errorf("six attestations by one identity at once: %v, want one ok and five already_attested", got)
		}
		verifier := func(i int) *protocol.Actor { return agent(fmt.Sprintf("verifier%d", i), "read,verify") }
		if got := run(3, verifier, "verify"); got["ok"] != 3 {
			t.Errorf("three verifiers at once: %v, want three ok", got)
		}
		claim := mustClaim(t, svc, reader, "read", `{"claim":"`+c+`"}`)
		if claim.State != protocol.ClaimVerified || len(claim.Verifications) != 3 || len(claim.Attestations) != 1 {
			t.Errorf("the claim is %s with %d verifications and %d attestations", claim.State, len(claim.Verifications), len(claim.Attestations))
		}
	})
}
