package protocol_test

import (
	"context"
	"testing"
	"time"

	"github.com/parleyforum/parley/protocol"
	"github.com/parleyforum/parley/storage"
	"github.com/parleyforum/parley/storage/storagetest"
)

// § 7: an event for each change of state, none for an act that leaves the state as it is,
// one for each confirm and each mark; replaying them reproduces the thread (checked for
// every thread of every test when it ends, see newService).
func TestEvents(t *testing.T) {
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		ctx := context.Background()
		svc := newService(t, db)
		alice := agent("alice", "read,write")
		bob := agent("bob", "read,write")
		carol := agent("carol", "read,write")
		mod := agent("mod", "read,write,lock")
		ada := human("ada")

		var th string
		type written struct{ act, from, to string }
		steps := []struct {
			do   func()
			want *written // the event the step writes, nil for none
		}{
			{func() { th = send(t, svc, alice, envelope("ask", "", "Count the events")).Thread.ID }, &written{"ask", "", "open"}},
			{func() { send(t, svc, bob, envelope("note", th, "a note")) }, nil},
			{func() { send(t, svc, carol, envelope("ask", th, "a question")) }, nil},
			{func() { send(t, svc, bob, envelope("answer", th, "an answer")) }, &written{"answer", "open", "answered"}},
			{func() { send(t, svc, carol, envelope("answer", th, "another answer")) }, nil},
			{func() { send(t, svc, alice, envelope("decide", th, "the decision")) }, &written{"decide", "answered", "decided"}},
			{func() { send(t, svc, alice, envelope("decide", th, "the decision, revised")) }, nil},
			{func() { send(t, svc, carol, envelope("answer", th, "an answer to a decided thread")) }, nil},
			{func() { mustModerate(t)(confirm(svc, mod, th)) }, &written{"confirm", "decided", "decided"}},
			{func() { send(t, svc, mod, envelope("decide", th, "the moderator revises a confirmed decision")) }, nil},
			{func() { send(t, svc, alice, envelope("close", th, "closing")) }, &written{"close", "decided", "closed"}},
			{func() { send(t, svc, alice, envelope("close", th, "closing again")) }, nil},
			{func() { send(t, svc, ada, envelope("close", th, "a human's close confirms the proposed one")) }, &written{"close", "closed", "closed"}},
			{func() { send(t, svc, ada, envelope("reopen", th, "reopened")) }, &written{"reopen", "closed", "open"}},
			{func() { mustModerate(t)(mark(svc, ada, th, protocol.StateRejected)) }, &written{"mark", "open", "rejected"}},
			{func() { mustModerate(t)(mark(svc, ada, th, protocol.StateRejected)) }, &written{"mark", "rejected", "rejected"}},
			{func() { send(t, svc, bob, envelope("note", th, "a note on a rejected thread")) }, nil},
			{func() { send(t, svc, mod, envelope("reopen", th, "the moderator reopens")) }, &written{"reopen", "rejected", "open"}},
			{func() { send(t, svc, bob, envelope("answer", th, "answered again")) }, &written{"answer", "open", "answered"}},
		}
		var want []written
		cursorAt, cursor := 9, ""
		for i, st := range steps {
			st.do()
			if st.want != nil {
				want = append(want, *st.want)
			}
			evs := events(t, svc, th)
			if len(evs) != len(want) {
				t.Fatalf("after step %d there are %d events, want %d:\n%s", i, len(evs), len(want), jsonOf(evs))
			}
			if i == cursorAt {
				res, err := svc.ReadEvents(ctx, reader, []byte(jsonOf(map[string]string{"thread": th})))
				if err != nil {
					t.Fatal(err)
				}
				cursor = res.Cursor
			}
		}
		evs := events(t, svc, th)
		for i, ev := range evs {
			from := ""
			if ev.From != nil {
				from = string(*ev.From)
			}
			if got := (written{ev.Act, from, string(ev.To)}); got != want[i] {
				t.Errorf("event %d is %+v, want %+v", i, got, want[i])
			}
			if i > 0 && cmpKey(evs[i-1].ID, ev.ID) >= 0 {
				t.Errorf("events out of order: %s before %s", evs[i-1].ID, ev.ID)
			}
		}

		// since: only the events after the cursor; the cursor of the last read keeps the place.
		res, err := svc.ReadEvents(ctx, reader, []byte(jsonOf(map[string]string{"thread": th, "since": cursor})))
		if err != nil {
			t.Fatal(err)
		}
		if n := len(want) - 4; len(res.Events) != n || res.Events[0].Act != "close" {
			t.Fatalf("events since step %d: %s", cursorAt, jsonOf(res.Events))
		}
		res, err = svc.ReadEvents(ctx, reader, []byte(jsonOf(map[string]string{"thread": th, "since": res.Cursor})))
		if err != nil || len(res.Events) != 0 {
			t.Fatalf("events since the last cursor: %v %v", res, err)
		}
		for _, bad := range []string{"", "x", "e1.5", res.Cursor + "!", "aTEuMS4y", "ZTEuLTE", "ZTEuMDE"} {
			_, err := svc.ReadEvents(ctx, reader, []byte(jsonOf(map[string]string{"thread": th, "since": bad})))
			if e := refusal(t, err); e.Reason != protocol.ReasonInvalidBody {
				t.Errorf("since %q: %v", bad, err)
			}
		}
		_, err = svc.ReadEvents(ctx, reader, []byte(`{"thread":"th_999"}`))
		wantRefused(t, err, protocol.ReasonNotFound)
		_, err = svc.ReadEvents(ctx, nil, []byte(jsonOf(map[string]string{"thread": th})))
		wantRefused(t, err, protocol.ReasonUnauthenticated)
		_, err = svc.ReadEvents(ctx, agent("writer", "write"), []byte(jsonOf(map[string]string{"thread": th})))
		wantRefused(t, err, protocol.ReasonTokenRightMissing)
	})
}

// mustModerate fails the test when a confirm or mark is refused.
func mustModerate(t *testing.T) func(*protocol.ModerationResult, error) {
	return func(_ *protocol.ModerationResult, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("moderation: %v", err)
		}
	}
}

// The replay of the test helpers is itself checked: a chain that does not start with the
// opening, that skips a state, or whose confirm names the wrong event is refused.
func TestReplayCatchesBrokenChains(t *testing.T) {
	st := func(s protocol.State) *protocol.State { return &s }
	key := func(s string) *string { return &s }
	open := &protocol.EventView{ID: "ev_1", Act: "ask", To: protocol.StateOpen, Origin: "llm", Confirmed: true, ConfirmedAt: nowPtr()}
	answer := &protocol.EventView{ID: "ev_2", Act: "answer", From: st(protocol.StateOpen), To: protocol.StateAnswered, Origin: "llm"}
	skip := &protocol.EventView{ID: "ev_2", Act: "close", From: st(protocol.StateDecided), To: protocol.StateClosed, Origin: "llm"}
	wrong := &protocol.EventView{ID: "ev_3", Act: "confirm", From: st(protocol.StateAnswered), To: protocol.StateAnswered, Confirms: key("ev_1"), Confirmed: true, ConfirmedAt: nowPtr()}
	for name, evs := range map[string][]*protocol.EventView{
		"no opening":            {answer},
		"a skipped state":       {open, skip},
		"a confirm of another":  {open, answer, wrong},
		"a confirm not applied": {open, answer, {ID: "ev_3", Act: "confirm", From: st(protocol.StateAnswered), To: protocol.StateAnswered, Confirms: key("ev_2"), Confirmed: true, ConfirmedAt: nowPtr()}},
	} {
		if _, err := replayThread(evs); err == nil {
			t.Errorf("%s: the replay accepts it", name)
		}
	}
	if r, err := replayThread([]*protocol.EventView{open, answer}); err != nil || r.State != protocol.StateAnswered || r.ConfirmedState != protocol.StateOpen || r.ConfirmedAt != nil {
		t.Errorf("a good chain: %+v %v", r, err)
	}
}

func nowPtr() *time.Time {
	now := time.Now().UTC()
	return &now
}
