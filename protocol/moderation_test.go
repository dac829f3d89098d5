package protocol_test

import (
	"context"
	"testing"

	"github.com/parleyforum/parley/protocol"
	"github.com/parleyforum/parley/storage"
	"github.com/parleyforum/parley/storage/storagetest"
)

// § 5: proposal and confirmation; § 7: the labels of events.

func confirm(svc *protocol.Service, a *protocol.Actor, th string) (*protocol.ModerationResult, error) {
	return svc.Confirm(context.Background(), a, []byte(jsonOf(map[string]string{"thread": th})))
}

func mark(svc *protocol.Service, a *protocol.Actor, th string, state protocol.State) (*protocol.ModerationResult, error) {
	return svc.Mark(context.Background(), a, []byte(jsonOf(map[string]string{"thread": th, "state": string(state)})))
}

func lastEvent(t *testing.T, svc *protocol.Service, th string) *protocol.EventView {
	t.Helper()
	evs := events(t, svc, th)
	return evs[len(evs)-1]
}

// Who sets a state decides how it counts: a model's answer, decide and close are proposals,
// a lock holder's are confirmed with origin llm, a human's are confirmed with origin user.
func TestProposalsAndConfirmedStates(t *testing.T) {
	labeled := agent("mod2", "read,write,lock")
	labeled.Label = "Moderation"
	people := []struct {
		name      string
		actor     *protocol.Actor
		origin    string
		confirmed bool
		label     string
	}{
		{"a model", agent("alice", "read,write"), protocol.OriginLLM, false, "ainotes:alice"},
		{"a model with verify", agent("vera", "read,write,verify"), protocol.OriginLLM, false, "ainotes:vera"},
		{"a lock holder", agent("mod", "read,write,lock"), protocol.OriginLLM, true, "KI · mod"},
		{"a lock holder with a label", labeled, protocol.OriginLLM, true, "KI · Moderation"},
		{"a human", human("ada"), protocol.OriginUser, true, "human:ada"},
	}
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		svc := newService(t, db)
		bob := agent("bob", "read,write")
		for _, p := range people {
			t.Run(p.name, func(t *testing.T) {
				// p opens, bob asks back (so that p's answer is no self-reply), p answers,
				// decides, closes.
				th := send(t, svc, p.actor, envelope("ask", "", "A question of "+p.name)).Thread.ID
				confirmedState := protocol.StateOpen
				steps := []struct {
					kind string
					to   protocol.State
				}{{"answer", protocol.StateAnswered}, {"decide", protocol.StateDecided}, {"close", protocol.StateClosed}}
				ask := send(t, svc, bob, envelope("ask", th, "Can you answer it yourself?"))
				for _, st := range steps {
					more := []any{}
					if st.kind == "answer" {
						more = []any{"parent", ask.Message.ID}
					}
					res := send(t, svc, p.actor, envelope(st.kind, th, p.name+" "+st.kind+"s", more...))
					got := res.Thread
					if p.confirmed {
						confirmedState = st.to
					}
					if got.State != st.to || got.StateOrigin != p.origin || (got.StateConfirmedAt != nil) != p.confirmed || got.ConfirmedState != confirmedState {
						t.Fatalf("%s: thread %s origin %s confirmed at %v confirmed_state %s; want %s %s confirmed %v confirmed_state %s",
							st.kind, got.State, got.StateOrigin, got.StateConfirmedAt, got.ConfirmedState, st.to, p.origin, p.confirmed, confirmedState)
					}
					if got.Locked != (st.to == protocol.StateClosed && p.confirmed) {
						t.Fatalf("%s by %s: locked %v", st.kind, p.name, got.Locked)
					}
					ev := lastEvent(t, svc, th)
					if ev.Act != st.kind || ev.To != st.to || ev.Origin != p.origin || ev.Confirmed != p.confirmed ||
						(ev.ConfirmedAt != nil) != p.confirmed || ev.Label != p.label || ev.Message == nil || *ev.Message != res.Message.ID ||
						ev.Actor.Identity != p.actor.Identity || ev.Confirms != nil {
						t.Fatalf("%s: event %s", st.kind, jsonOf(ev))
					}
					if p.confirmed && !got.StateConfirmedAt.Equal(*ev.ConfirmedAt) {
						t.Fatalf("thread confirmed at %v, event at %v", got.StateConfirmedAt, ev.ConfirmedAt)
					}
				}
			})
		}
	})
}

func TestConfirm(t *testing.T) {
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		svc := newService(t, db)
		alice := agent("alice", "read,write")
		bob := agent("bob", "read,write")
		mod := agent("mod", "read,write,lock")
		ada := human("ada")

		th := send(t, svc, alice, envelope("ask", "", "Confirm me")).Thread.ID
		// The opening state is no proposal.
		_, err := confirm(svc, mod, th)
		wantRefused(t, err, protocol.ReasonInvalidTransition)

		send(t, svc, bob, envelope("answer", th, "a proposal"))
		proposal := lastEvent(t, svc, th)
		_, err = confirm(svc, bob, th)
		wantRefused(t, err, protocol.ReasonTokenRightMissing)
		_, err = confirm(svc, alice, th) // the creator without lock
		wantRefused(t, err, protocol.ReasonTokenRightMissing)
		_, err = confirm(svc, nil, th)
		wantRefused(t, err, protocol.ReasonUnauthenticated)

		res, err := confirm(svc, mod, th)
		if err != nil {
			t.Fatalf("confirm: %v", err)
		}
		ev, tv := res.Event, res.Thread
		if ev.Act != "confirm" || ev.From == nil || *ev.From != protocol.StateAnswered || ev.To != protocol.StateAnswered ||
			ev.Confirms == nil || *ev.Confirms != proposal.ID || !ev.Confirmed || ev.ConfirmedAt == nil ||
			ev.Label != "KI · mod" || ev.Origin != protocol.OriginLLM || ev.Message != nil {
			t.Fatalf("confirm event: %s", jsonOf(ev))
		}
		if tv.State != protocol.StateAnswered || tv.ConfirmedState != protocol.StateAnswered || tv.StateConfirmedAt == nil ||
			!tv.StateConfirmedAt.Equal(*ev.ConfirmedAt) || tv.StateOrigin != protocol.OriginLLM {
			t.Fatalf("thread after confirm: %s", jsonOf(tv))
		}
		evs := events(t, svc, th)
		if n := len(evs); n != 3 || evs[2].ID != ev.ID {
			t.Fatalf("events after confirm: %s", jsonOf(evs))
		}
		if got := evs[1]; got.ID != proposal.ID || !got.Confirmed || got.ConfirmedAt == nil || !got.ConfirmedAt.Equal(*ev.ConfirmedAt) {
			t.Fatalf("the confirmed event reads %s", jsonOf(got))
		}
		_, err = confirm(svc, mod, th)
		wantRefused(t, err, protocol.ReasonInvalidTransition)
		_, err = confirm(svc, ada, th)
		wantRefused(t, err, protocol.ReasonInvalidTransition)

		// A human confirms a decision; the origin stays the proposer's.
		send(t, svc, alice, envelope("decide", th, "decided"))
		res, err = confirm(svc, ada, th)
		if err != nil || res.Event.Origin != protocol.OriginUser || res.Event.Label != "human:ada" || res.Thread.StateOrigin != protocol.OriginLLM ||
			res.Thread.ConfirmedState != protocol.StateDecided {
			t.Fatalf("ada's confirm: %s %v", jsonOf(res), err)
		}

		// The input is strict, and the thread must exist.
		for _, body := range []string{`{}`, `{"thread":"msg_1"}`, `{"thread":"th_1","state":"open"}`, `[]`} {
			_, err := svc.Confirm(context.Background(), mod, []byte(body))
			wantRefused(t, err, protocol.ReasonInvalidBody)
		}
		_, err = confirm(svc, mod, "th_999")
		wantRefused(t, err, protocol.ReasonNotFound)
	})
}

func TestMark(t *testing.T) {
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		svc := newService(t, db)
		alice := agent("alice", "read,write")
		mod := agent("mod", "read,write,lock")
		ada := human("ada")
		th := send(t, svc, alice, envelope("ask", "", "Mark me")).Thread.ID

		for _, a := range []*protocol.Actor{alice, mod} {
			_, err := mark(svc, a, th, protocol.StateDecided)
			wantRefused(t, err, protocol.ReasonTokenRightMissing)
		}
		_, err := mark(svc, nil, th, protocol.StateDecided)
		wantRefused(t, err, protocol.ReasonUnauthenticated)

		// Any state from any state, in any step, confirmed, one event each (also when the
		// state stays).
		prev := protocol.StateOpen
		for _, to := range []protocol.State{
			protocol.StateRejected, protocol.StateDecided, protocol.StateOpen, protocol.StateDeferred,
			protocol.StateDeferred, protocol.StateAnswered, protocol.StateObsolete, protocol.StateClosed,
		} {
			n := len(events(t, svc, th))
			res, err := mark(svc, ada, th, to)
			if err != nil {
				t.Fatalf("mark %s -> %s: %v", prev, to, err)
			}
			tv, ev := res.Thread, res.Event
			if tv.State != to || tv.StateOrigin != protocol.OriginUser || tv.StateConfirmedAt == nil || tv.ConfirmedState != to {
				t.Fatalf("mark %s: thread %s", to, jsonOf(tv))
			}
			if ev.Act != "mark" || ev.From == nil || *ev.From != prev || ev.To != to || !ev.Confirmed || ev.ConfirmedAt == nil ||
				ev.Origin != protocol.OriginUser || ev.Label != "human:ada" || ev.Message != nil || ev.Confirms != nil {
				t.Fatalf("mark %s: event %s", to, jsonOf(ev))
			}
			if got := len(events(t, svc, th)); got != n+1 {
				t.Fatalf("mark wrote %d events", got-n)
			}
			prev = to
		}
		// Marked closed is confirmed closed: locked, even for mark.
		if tv := thread(t, svc, th); !tv.Locked {
			t.Fatalf("marked closed is not locked: %s", jsonOf(tv))
		}
		_, err = mark(svc, ada, th, protocol.StateOpen)
		wantRefused(t, err, protocol.ReasonThreadClosed)

		for _, body := range []string{
			`{"thread":"th_1"}`, `{"thread":"th_1","state":"closed, confirmed"}`, `{"thread":"th_1","state":"Open"}`,
			`{"thread":"th_1","state":"open","note":"x"}`, `{"state":"open"}`, `{"thread":"th_1","state":7}`,
		} {
			_, err := svc.Mark(context.Background(), ada, []byte(body))
			wantRefused(t, err, protocol.ReasonInvalidBody)
		}
		_, err = mark(svc, ada, "th_999", protocol.StateOpen)
		wantRefused(t, err, protocol.ReasonNotFound)
	})
}

// A proposed closed does not lock; a confirmed closed accepts nothing but reopen, from
// anyone: no message, no confirm, no mark.
func TestClosedLocks(t *testing.T) {
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		svc := newService(t, db)
		alice := agent("alice", "read,write")
		bob := agent("bob", "read,write")
		mod := agent("mod", "read,write,lock")
		ada := human("ada")

		th := send(t, svc, alice, envelope("ask", "", "Lock me")).Thread.ID
		send(t, svc, bob, envelope("answer", th, "answer"))
		if res := send(t, svc, alice, envelope("close", th, "closed, proposed")); res.Thread.Locked {
			t.Fatalf("a proposed close locks: %s", jsonOf(res.Thread))
		}
		send(t, svc, bob, envelope("note", th, "still open for words"))
		send(t, svc, bob, envelope("answer", th, "an answer after the close"))
		send(t, svc, ada, envelope("ask", th, "a question after the close"))
		if res := send(t, svc, alice, envelope("close", th, "closed again")); res.Thread.State != protocol.StateClosed || res.Thread.Locked {
			t.Fatalf("a second proposed close: %s", jsonOf(res.Thread))
		}
		if res, err := confirm(svc, mod, th); err != nil || !res.Thread.Locked {
			t.Fatalf("confirming the close locks: %v %v", res, err)
		}
		for _, kind := range []string{"ask", "answer", "note", "decide", "close", "defer", "reject", "obsolete"} {
			for _, a := range []*protocol.Actor{alice, bob, mod, ada} {
				refuse(t, svc, a, envelope(kind, th, "after the lock"), protocol.ReasonThreadClosed)
			}
		}
		for _, a := range []*protocol.Actor{mod, ada} {
			_, err := confirm(svc, a, th)
			wantRefused(t, err, protocol.ReasonThreadClosed)
		}
		_, err := mark(svc, ada, th, protocol.StateDecided)
		wantRefused(t, err, protocol.ReasonThreadClosed)
		refuse(t, svc, bob, envelope("reopen", th, "not mine to reopen"), protocol.ReasonThreadAuthorityMissing)
		if res := send(t, svc, alice, envelope("reopen", th, "the creator reopens")); res.Thread.State != protocol.StateOpen || res.Thread.Locked {
			t.Fatalf("reopen: %s", jsonOf(res.Thread))
		}
		// The creator's reopen is a proposal: the last confirmed state stays closed.
		if tv := thread(t, svc, th); tv.StateConfirmedAt != nil || tv.ConfirmedState != protocol.StateClosed {
			t.Fatalf("after a model's reopen: %s", jsonOf(tv))
		}

		// A lock holder's close locks at once; so does a human's.
		for _, closer := range []*protocol.Actor{mod, ada} {
			th := send(t, svc, alice, envelope("ask", "", "Close me at once")).Thread.ID
			send(t, svc, bob, envelope("answer", th, "answer"))
			if res := send(t, svc, closer, envelope("close", th, "closed")); !res.Thread.Locked {
				t.Fatalf("%s's close does not lock: %s", closer.Identity, jsonOf(res.Thread))
			}
			refuse(t, svc, bob, envelope("note", th, "late"), protocol.ReasonThreadClosed)
		}
	})
}
