package protocol_test

import (
	"context"
	"strings"
	"testing"

	"github.com/parleyforum/parley/protocol"
)

// Helpers of the claim tests, and the replay of claim events every test's threads go
// through when it ends (newService).

// splitEvents separates a thread's own events from those of its claims (subject cl_…).
func splitEvents(evs []*protocol.EventView, th string) (own, claims []*protocol.EventView) {
	for _, ev := range evs {
		if strings.HasPrefix(ev.Subject, "cl_") && ev.Thread == th {
			claims = append(claims, ev)
		} else {
			own = append(own, ev)
		}
	}
	return own, claims
}

// checkClaimReplay replays each claim's events, first to last: the first is its assert
// (null -> unverified), each later one starts where the one before ended, and the last ends
// in the state the claim is stored with. Every claim of the thread has events.
func checkClaimReplay(t *testing.T, svc *protocol.Service, th string, evs []*protocol.EventView) {
	t.Helper()
	last := map[string]*protocol.EventView{}
	for _, ev := range evs {
		prev, seen := last[ev.Subject]
		switch {
		case !seen && (ev.Act != "assert" || ev.From != nil || ev.To != protocol.State(protocol.ClaimUnverified)):
			t.Errorf("the first event %s of %s is %s %v -> %s, want assert null -> unverified", ev.ID, ev.Subject, ev.Act, ev.From, ev.To)
		case seen && (ev.From == nil || *ev.From != prev.To):
			t.Errorf("event %s of %s starts from %v, but the claim was %s", ev.ID, ev.Subject, ev.From, prev.To)
		case ev.Confirmed != (ev.ConfirmedAt != nil) || ev.Message != nil || ev.Confirms != nil:
			t.Errorf("claim event %s reads confirmed %v at %v, message %v, confirms %v", ev.ID, ev.Confirmed, ev.ConfirmedAt, ev.Message, ev.Confirms)
		}
		last[ev.Subject] = ev
	}
	for _, c := range readThread(t, svc, th).Claims {
		ev, ok := last[c.ID]
		if !ok {
			t.Errorf("claim %s of %s has no events", c.ID, th)
			continue
		}
		if string(ev.To) != string(c.State) {
			t.Errorf("replaying %s gives %s, the claim is %s", c.ID, ev.To, c.State)
		}
	}
}

// claimOp calls one dialectic operation by its name with a JSON input.
func claimOp(svc *protocol.Service, a *protocol.Actor, op, input string) (*protocol.ClaimResult, error) {
	ctx := context.Background()
	ops := map[string]func(context.Context, *protocol.Actor, []byte) (*protocol.ClaimResult, error){
		"assert": svc.Assert, "attest": svc.Attest, "refute": svc.Refute,
		"verify": svc.Verify, "read": svc.ReadClaim, "mark": svc.MarkClaim,
	}
	return ops[op](ctx, a, []byte(input))
}

// mustClaim calls an operation that must be accepted.
func mustClaim(t *testing.T, svc *protocol.Service, a *protocol.Actor, op, input string) *protocol.ClaimView {
	t.Helper()
	res, err := claimOp(svc, a, op, input)
	if err != nil {
		t.Fatalf("%s %s: %v", op, input, err)
	}
	return res.Claim
}

// proof is one valid evidence list.
const proof = `[{"kind":"url","ref":"https://example.org/run/1"}]`
