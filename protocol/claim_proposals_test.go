package protocol_test

import (
	"context"
	"encoding/json"
	"slices"
	"testing"

	"github.com/parleyforum/parley/protocol"
	"github.com/parleyforum/parley/storage"
	"github.com/parleyforum/parley/storage/storagetest"
)

// The claims' proposals are the models' unconfirmed supported, verified and refuted states,
// oldest first, never a closed thread's; a human's confirm is a mark with the claim's own
// state, which takes it out of them, and says what it was before; everything else is refused
// and changes nothing.
func TestClaimProposals(t *testing.T) {
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		svc := newService(t, db)
		ctx := context.Background()
		alice, bob := agent("alice", "read,write"), agent("bob", "read,write,verify")
		ada := human("ada")
		claim := func(th, statement string) string {
			in := map[string]any{"thread": th, "statement": statement, "evidence": json.RawMessage(proof)}
			return mustClaim(t, svc, alice, "assert", jsonOf(in)).ID
		}
		on := func(a *protocol.Actor, op, id string) {
			in := `{"claim":"` + id + `","evidence":` + proof
			if op == "refute" {
				in += `,"body":"It does not hold."`
			}
			mustClaim(t, svc, a, op, in+`}`)
		}
		th := send(t, svc, alice, envelope("ask", "", "Which claims wait?")).Thread.ID
		closed := send(t, svc, alice, envelope("ask", "", "Closed?")).Thread.ID

		supported := claim(th, "supported by a model")
		on(bob, "attest", supported)
		asserted := claim(th, "only asserted")
		verified := claim(th, "sealed by a model")
		on(bob, "attest", verified)
		on(bob, "verify", verified)
		refuted := claim(th, "refuted by a model")
		on(bob, "refute", refuted)
		byHuman := claim(th, "refuted by a human")
		on(ada, "refute", byHuman)
		inClosed := claim(closed, "in a closed thread")
		on(bob, "attest", inClosed)
		send(t, svc, ada, envelope("close", closed, "Done."))

		list := func() (ids []string, was map[string]protocol.ClaimState) {
			t.Helper()
			was = map[string]protocol.ClaimState{}
			cursor := ""
			for range 10 {
				page, err := svc.ClaimProposals(ctx, reader, cursor, 1)
				if err != nil {
					t.Fatal(err)
				}
				for _, p := range page.Proposals {
					ids, was[p.Claim.ID] = append(ids, p.Claim.ID), p.Was
				}
				if !page.More {
					break
				}
				cursor = *page.Cursor
			}
			return ids, was
		}
		ids, was := list()
		if want := []string{supported, verified, refuted}; !slices.Equal(ids, want) {
			t.Fatalf("claims' proposals: %v, want %v", ids, want)
		}
		if was[supported] != protocol.ClaimUnverified || was[verified] != protocol.ClaimSupported || was[refuted] != protocol.ClaimUnverified {
			t.Errorf("the states before the proposals: %v", was)
		}
		threads, err := svc.Proposals(ctx, reader, "", 0)
		if err != nil {
			t.Fatal(err)
		}
		if n, err := svc.QueueCount(ctx, reader); err != nil || n != 3+len(threads.Proposals) {
			t.Errorf("queue count %d (%v), want 3 claims and %d threads", n, err, len(threads.Proposals))
		}

		refusals := []struct {
			name   string
			actor  *protocol.Actor
			input  string
			reason protocol.Reason
		}{
			{"a model", bob, `{"claim":"` + supported + `"}`, protocol.ReasonTokenRightMissing},
			{"only asserted", ada, `{"claim":"` + asserted + `"}`, protocol.ReasonInvalidTransition},
			{"confirmed by a human already", ada, `{"claim":"` + byHuman + `"}`, protocol.ReasonInvalidTransition},
			{"a closed thread's", ada, `{"claim":"` + inClosed + `"}`, protocol.ReasonThreadClosed},
			{"no such claim", ada, `{"claim":"cl_999999"}`, protocol.ReasonNotFound},
			{"another field", ada, `{"claim":"` + supported + `","state":"refuted"}`, protocol.ReasonInvalidBody},
		}
		for _, r := range refusals {
			_, err := svc.ConfirmClaim(ctx, r.actor, []byte(r.input))
			if refusal, ok := protocol.AsError(err); !ok || refusal.Reason != r.reason {
				t.Errorf("%s: %v, want %s", r.name, err, r.reason)
			}
		}
		if ids, _ := list(); len(ids) != 3 {
			t.Fatalf("the refused confirms changed the proposals: %v", ids)
		}

		got, err := svc.ConfirmClaim(ctx, ada, []byte(`{"claim":"`+verified+`"}`))
		if err != nil {
			t.Fatal(err)
		}
		if got.Claim.State != protocol.ClaimVerified || !got.Claim.Confirmed || got.Claim.StateOrigin != "user" || got.Was != protocol.ClaimSupported {
			t.Errorf("confirmed: state %s confirmed %t origin %s was %s", got.Claim.State, got.Claim.Confirmed, got.Claim.StateOrigin, got.Was)
		}
		_, err = svc.ConfirmClaim(ctx, ada, []byte(`{"claim":"`+verified+`"}`))
		wantRefused(t, err, protocol.ReasonInvalidTransition)
		if ids, _ := list(); !slices.Equal(ids, []string{supported, refuted}) {
			t.Errorf("after the confirm: %v, want [%s %s]", ids, supported, refuted)
		}
		_, err = svc.ClaimProposals(ctx, reader, "bogus", 0)
		wantRefused(t, err, protocol.ReasonInvalidBody)
		_, err = svc.ClaimProposals(ctx, nil, "", 0)
		wantRefused(t, err, protocol.ReasonUnauthenticated)
	})
}
