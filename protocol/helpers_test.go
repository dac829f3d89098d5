package protocol_test

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/parleyforum/parley/protocol"
	"github.com/parleyforum/parley/storage"
)

// Shared helpers of the protocol tests: actors, sending and refusing, reading back, and the
// checks every test's threads go through when it ends (the replay of their events).

func agent(handle, rights string) *protocol.Actor {
	r, err := protocol.ParseRights(rights)
	if err != nil {
		panic(err)
	}
	return &protocol.Actor{Identity: protocol.AgentIdentity("ainotes", handle), Rights: r}
}

// human is a human signed in through the pages.
func human(name string) *protocol.Actor { return protocol.HumanActor(name) }

func send(t *testing.T, svc *protocol.Service, a *protocol.Actor, env string) *protocol.SendResult {
	t.Helper()
	res, err := svc.Send(context.Background(), a, []byte(env))
	if err != nil {
		t.Fatalf("send %s: %v", env, err)
	}
	return res
}

// refusal is the refusal in err, failing the test when err is no refusal.
func refusal(t *testing.T, err error) *protocol.Error {
	t.Helper()
	if err == nil {
		t.Fatalf("accepted, want a refusal")
	}
	e, ok := protocol.AsError(err)
	if !ok {
		t.Fatalf("error %v is not a refusal", err)
	}
	if e.Status != e.Reason.Status() {
		t.Errorf("refusal %s carries status %d, want %d", e.Reason, e.Status, e.Reason.Status())
	}
	return e
}

// wantRefused fails unless err is a refusal for reason.
func wantRefused(t *testing.T, err error, reason protocol.Reason) *protocol.Error {
	t.Helper()
	if err == nil {
		t.Fatalf("accepted, want %s", reason)
	}
	e := refusal(t, err)
	if e.Reason != reason {
		t.Fatalf("refused with %s (%s), want %s", e.Reason, e.Message, reason)
	}
	return e
}

// refuse sends env and fails unless it is refused for reason.
func refuse(t *testing.T, svc *protocol.Service, a *protocol.Actor, env string, reason protocol.Reason) *protocol.Error {
	t.Helper()
	res, err := svc.Send(context.Background(), a, []byte(env))
	if err == nil {
		t.Fatalf("send %s: accepted (%s in %s), want %s", env, res.Message.ID, res.Thread.State, reason)
	}
	e := refusal(t, err)
	if e.Reason != reason {
		t.Fatalf("send %s: refused with %s (%s), want %s", env, e.Reason, e.Message, reason)
	}
	return e
}

// jsonOf writes v as JSON, for building requests.
func jsonOf(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// envelope builds an envelope: kind, thread ("" for none), body, and pairs of further fields.
func envelope(kind, thread, body string, more ...any) string {
	m := map[string]any{"kind": kind, "body": body}
	if thread != "" {
		m["thread"] = thread
	}
	for i := 0; i+1 < len(more); i += 2 {
		m[more[i].(string)] = more[i+1]
	}
	return jsonOf(m)
}

// generous are the reference limits with a write rate no test reaches by accident.
func generous() protocol.Limits {
	l := protocol.DefaultLimits()
	l.WritesPerMinute = 1 << 20
	return l
}

// reader reads everything in the tests' checks.
var reader = agent("reader", "read")

// newService is the operation layer over db with the given limits (generous when none). When
// the test ends, every thread on db is replayed from its events (§ 7) and must come out as
// it is stored.
func newService(t *testing.T, db *storage.DB, limits ...protocol.Limits) *protocol.Service {
	t.Helper()
	l := generous()
	if len(limits) > 0 {
		l = limits[0]
	}
	svc := protocol.New(db, protocol.Options{Limits: l})
	t.Cleanup(func() {
		if t.Failed() {
			return
		}
		for _, th := range allThreads(t, svc) {
			checkReplay(t, svc, th.ID)
		}
	})
	return svc
}

// allThreads lists every thread, paging through list_threads.
func allThreads(t *testing.T, svc *protocol.Service) []*protocol.ThreadView {
	t.Helper()
	var out []*protocol.ThreadView
	req := map[string]any{"limit": 100}
	for {
		page, err := svc.ListThreads(context.Background(), reader, []byte(jsonOf(req)))
		if err != nil {
			t.Fatalf("list threads: %v", err)
		}
		out = append(out, page.Threads...)
		if !page.More {
			return out
		}
		req["cursor"] = *page.Cursor
	}
}

func readThread(t *testing.T, svc *protocol.Service, th string) *protocol.ReadThreadResult {
	t.Helper()
	res, err := svc.ReadThread(context.Background(), reader, []byte(jsonOf(map[string]any{"thread": th})))
	if err != nil {
		t.Fatalf("read thread %s: %v", th, err)
	}
	return res
}

func thread(t *testing.T, svc *protocol.Service, th string) *protocol.ThreadView {
	t.Helper()
	return readThread(t, svc, th).Thread
}

func events(t *testing.T, svc *protocol.Service, th string) []*protocol.EventView {
	t.Helper()
	res, err := svc.ReadEvents(context.Background(), reader, []byte(jsonOf(map[string]any{"thread": th})))
	if err != nil {
		t.Fatalf("read events of %s: %v", th, err)
	}
	return res.Events
}

// flatten lists a message tree in order of creation.
func flatten(tree []*protocol.MessageView) []*protocol.MessageView {
	var out []*protocol.MessageView
	var walk func([]*protocol.MessageView)
	walk = func(ms []*protocol.MessageView) {
		for _, m := range ms {
			out = append(out, m)
			walk(m.Replies)
		}
	}
	walk(tree)
	slices.SortFunc(out, func(a, b *protocol.MessageView) int { return cmpKey(a.ID, b.ID) })
	return out
}

// cmpKey orders prefixed keys (msg_9 before msg_10) by their number.
func cmpKey(a, b string) int {
	na, nb := keyNumber(a), keyNumber(b)
	switch {
	case na < nb:
		return -1
	case na > nb:
		return 1
	}
	return 0
}

func keyNumber(key string) int64 {
	_, digits, _ := strings.Cut(key, "_")
	var n int64
	fmt.Sscan(digits, &n)
	return n
}

// replayedState is what a thread's events say its state is.
type replayedState struct {
	State          protocol.State
	Origin         string
	ConfirmedAt    *time.Time
	ConfirmedState protocol.State
}

// replayThread reproduces a thread's state from its events, first to last (§ 7), checking on the
// way that they form one chain: each event starts where the one before ended, a confirm
// confirms the event that set the current state, and that event reads confirmed at the
// confirm's time.
func replayThread(evs []*protocol.EventView) (replayedState, error) {
	var r replayedState
	var current *protocol.EventView
	for i, ev := range evs {
		if i == 0 {
			if ev.From != nil || ev.Act != string(protocol.KindAsk) || ev.To != protocol.StateOpen {
				return r, fmt.Errorf("the first event %s is %s %v -> %s, want the opening ask (null -> open)", ev.ID, ev.Act, ev.From, ev.To)
			}
		} else if ev.From == nil || *ev.From != r.State {
			return r, fmt.Errorf("event %s starts from %v, but the state before it is %s", ev.ID, ev.From, r.State)
		}
		if strings.HasPrefix(ev.Subject, "msg_") {
			// Hiding and unhiding a message (§ 18) change no state: from = to = the state.
			if ev.To != r.State || (ev.Act != protocol.ActHide && ev.Act != protocol.ActUnhide) {
				return r, fmt.Errorf("event %s (%s of %s) moves %v -> %s, but the state is %s", ev.ID, ev.Act, ev.Subject, ev.From, ev.To, r.State)
			}
			continue
		}
		if ev.Act == protocol.ActMove {
			// A move (§ 16) changes the thread's room, never its state.
			if ev.From == nil || *ev.From != r.State || ev.To != r.State || ev.Room == nil {
				return r, fmt.Errorf("move %s goes %v -> %s to %v, want from = to = %s and a room", ev.ID, ev.From, ev.To, ev.Room, r.State)
			}
			continue
		}
		if ev.Act == "confirm" {
			switch {
			case ev.To != r.State:
				return r, fmt.Errorf("confirm %s has to = %s, but confirms %s", ev.ID, ev.To, r.State)
			case ev.Confirms == nil || *ev.Confirms != current.ID:
				return r, fmt.Errorf("confirm %s confirms %v, want %s, the event that set the state", ev.ID, ev.Confirms, current.ID)
			case !ev.Confirmed || ev.ConfirmedAt == nil:
				return r, fmt.Errorf("confirm %s does not read confirmed", ev.ID)
			case !current.Confirmed || current.ConfirmedAt == nil || !current.ConfirmedAt.Equal(*ev.ConfirmedAt):
				return r, fmt.Errorf("event %s, confirmed by %s at %v, reads confirmed %v at %v", current.ID, ev.ID, ev.ConfirmedAt, current.Confirmed, current.ConfirmedAt)
			}
			r.ConfirmedAt = ev.ConfirmedAt
			r.ConfirmedState = r.State
			continue
		}
		if ev.Confirmed != (ev.ConfirmedAt != nil) {
			return r, fmt.Errorf("event %s reads confirmed %v at %v", ev.ID, ev.Confirmed, ev.ConfirmedAt)
		}
		if ev.Confirms != nil {
			return r, fmt.Errorf("event %s (%s) names confirms %s", ev.ID, ev.Act, *ev.Confirms)
		}
		r.State, r.Origin, r.ConfirmedAt = ev.To, ev.Origin, ev.ConfirmedAt
		if ev.Confirmed {
			r.ConfirmedState = ev.To
		}
		current = ev
	}
	if current == nil {
		return r, fmt.Errorf("no events")
	}
	return r, nil
}

// checkReplay replays a thread's events and compares the result with the stored thread:
// state, state_origin, state_confirmed_at, confirmed_state and locked.
func checkReplay(t *testing.T, svc *protocol.Service, th string) {
	t.Helper()
	got := thread(t, svc, th)
	evs, claimEvs := splitEvents(events(t, svc, th), th)
	checkClaimReplay(t, svc, th, claimEvs)
	r, err := replayThread(evs)
	if err != nil {
		t.Errorf("replaying %s: %v\n%s", th, err, jsonOf(evs))
		return
	}
	for _, ev := range evs {
		if ev.Thread != th || (ev.Subject != th && !strings.HasPrefix(ev.Subject, "msg_")) {
			t.Errorf("event %s of %s names thread %s, subject %s", ev.ID, th, ev.Thread, ev.Subject)
		}
	}
	same := r.State == got.State && r.Origin == got.StateOrigin && r.ConfirmedState == got.ConfirmedState &&
		sameTime(r.ConfirmedAt, got.StateConfirmedAt) &&
		got.Locked == (r.State == protocol.StateClosed && r.ConfirmedAt != nil)
	if !same {
		t.Errorf("replaying %s gives %+v (confirmed at %v), the thread is %s/%s confirmed at %v, confirmed_state %s, locked %v\n%s",
			th, r, r.ConfirmedAt, got.State, got.StateOrigin, got.StateConfirmedAt, got.ConfirmedState, got.Locked, jsonOf(evs))
	}
}

func sameTime(a, b *time.Time) bool {
	return (a == nil) == (b == nil) && (a == nil || a.Equal(*b))
}

// counts is how much the forum holds, read through the operation layer.
type counts struct{ Threads, Messages, Events int }

// census counts threads, messages and events.
func census(t *testing.T, svc *protocol.Service) counts {
	t.Helper()
	var c counts
	for _, th := range allThreads(t, svc) {
		c.Threads++
		c.Messages += len(flatten(readThread(t, svc, th.ID).Messages))
		c.Events += len(events(t, svc, th.ID))
	}
	return c
}

// canon rewrites a JSON text with sorted keys, so that two texts compare by content.
func canon(s string) string {
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		return "invalid JSON: " + s
	}
	return jsonOf(v)
}

// sameAwaiting compares two awaitings field by field (nil equals only nil).
func sameAwaiting(a, b *protocol.Awaiting) bool {
	return jsonOf(a) == jsonOf(b)
}

// awaitsTo reads as "awaits this party".
func awaitsTo(identity, extension string, setBy string) string {
	return jsonOf(map[string]any{"to": map[string]string{"identity": identity, "extension": extension}, "set_by": setBy})
}

// awaitsAny reads as "awaits anyone except this party".
func awaitsAny(identity, extension string, setBy string) string {
	return jsonOf(map[string]any{"to": "any", "except": map[string]string{"identity": identity, "extension": extension}, "set_by": setBy})
}

// inboxIDs reads an inbox and gives the threads it lists, in order.
func inboxIDs(t *testing.T, svc *protocol.Service, a *protocol.Actor, req map[string]any) ([]string, *protocol.InboxResult) {
	t.Helper()
	if req == nil {
		req = map[string]any{}
	}
	res, err := svc.Inbox(context.Background(), a, []byte(jsonOf(req)))
	if err != nil {
		t.Fatalf("inbox %v of %s: %v", req, a.Identity, err)
	}
	ids := []string{}
	for _, it := range res.Items {
		ids = append(ids, it.Thread.ID)
	}
	return ids, res
}

// inboxWant reads an inbox until it lists exactly want, in order. On Postgres the inbox shows
// a change once no transaction begun before its commit is still running in its database, so
// a read right after a write may briefly lag; it never skips.
// caughtUp reads a's inbox with the filters of req to its end and answers the cursor there.
func caughtUp(t *testing.T, svc *protocol.Service, a *protocol.Actor, req map[string]any) string {
	t.Helper()
	req = maps.Clone(req)
	for {
		res, err := svc.Inbox(context.Background(), a, []byte(jsonOf(req)))
		if err != nil {
			t.Fatalf("inbox %v of %s: %v", req, a.Identity, err)
		}
		if !res.More {
			return res.Cursor
		}
		req["since"] = res.Cursor
	}
}

func inboxWant(t *testing.T, svc *protocol.Service, a *protocol.Actor, req map[string]any, want ...string) *protocol.InboxResult {
	t.Helper()
	if want == nil {
		want = []string{}
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		got, res := inboxIDs(t, svc, a, req)
		if slices.Equal(got, want) {
			return res
		}
		if time.Now().After(deadline) {
			t.Fatalf("inbox %v of %s (%v) lists %v, want %v", req, a.Identity, a.Rights.List(), got, want)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
