package protocol_test

import (
	"context"
	"strings"
	"testing"

	"github.com/parleyforum/parley/protocol"
	"github.com/parleyforum/parley/storage"
	"github.com/parleyforum/parley/storage/storagetest"
)

// § 4: the state machine, checked against the table of PROTOCOL.md as it is written there.

// stateTable is the full table of § 4, cell for cell: rows are the current state, cells the
// result for an actor that passed the authority check.
var stateTable = []struct {
	current                                      string
	askNote, answer, decide, close, side, reopen string
}{
	{"open", "stay", "answered", "decided", "invalid (human: closed)", "side state", "invalid"},
	{"answered", "stay", "stay", "decided", "closed", "side state", "invalid"},
	{"decided", "stay", "stay", "stay (revision)", "closed", "side state", "invalid"},
	{"closed, proposed", "stay", "stay", "invalid", "stay", "invalid", "open"},
	{"closed, confirmed", "thread_closed", "thread_closed", "thread_closed", "thread_closed", "thread_closed", "open"},
	{"deferred/obsolete/rejected", "stay", "stay", "invalid", "invalid", "invalid", "open (moderation only)"},
}

// tableRow is one current state of the table: a row names one state, or the three side
// states at once.
type tableRow struct {
	name   string // "open", "closed, proposed", "deferred", …
	state  protocol.State
	locked bool
}

func tableRows(current string) []tableRow {
	switch current {
	case "closed, proposed":
		return []tableRow{{current, protocol.StateClosed, false}}
	case "closed, confirmed":
		return []tableRow{{current, protocol.StateClosed, true}}
	case "deferred/obsolete/rejected":
		var rows []tableRow
		for _, s := range protocol.SideStates {
			rows = append(rows, tableRow{string(s), s, false})
		}
		return rows
	}
	return []tableRow{{current, protocol.State(current), false}}
}

// tableKinds are the kinds of a column of the table.
var tableKinds = []struct {
	column string
	kinds  []protocol.Kind
}{
	{"ask/note", []protocol.Kind{protocol.KindAsk, protocol.KindNote}},
	{"answer", []protocol.Kind{protocol.KindAnswer}},
	{"decide", []protocol.Kind{protocol.KindDecide}},
	{"close", []protocol.Kind{protocol.KindClose}},
	{"defer/reject/obsolete", []protocol.Kind{protocol.KindDefer, protocol.KindReject, protocol.KindObsolete}},
	{"reopen", []protocol.Kind{protocol.KindReopen}},
}

// outcome is what a cell says: the state after the act, or the reason of the refusal.
type outcome struct {
	state  protocol.State
	reason protocol.Reason
}

func (o outcome) String() string {
	if o.reason != "" {
		return string(o.reason)
	}
	return string(o.state)
}

// cell reads one cell for a model (human false) or for a human.
func cell(text string, current protocol.State, kind protocol.Kind, human bool) outcome {
	if human {
		if h, ok := strings.CutPrefix(text, "invalid (human: "); ok {
			return outcome{state: protocol.State(strings.TrimSuffix(h, ")"))}
		}
	}
	switch {
	case text == "stay", strings.HasPrefix(text, "stay "):
		return outcome{state: current}
	case text == "invalid", strings.HasPrefix(text, "invalid "):
		return outcome{reason: protocol.ReasonInvalidTransition}
	case text == "thread_closed":
		return outcome{reason: protocol.ReasonThreadClosed}
	case text == "side state":
		return outcome{state: kind.Target()}
	case strings.HasPrefix(text, "open"):
		return outcome{state: protocol.StateOpen}
	}
	return outcome{state: protocol.State(text)}
}

// tableCase is one (current state, kind) pair with what the table says for a model.
type tableCase struct {
	row   tableRow
	kind  protocol.Kind
	model outcome
	text  string
}

func tableCases() []tableCase {
	var out []tableCase
	for _, r := range stateTable {
		texts := []string{r.askNote, r.answer, r.decide, r.close, r.side, r.reopen}
		for col, tk := range tableKinds {
			for _, row := range tableRows(r.current) {
				for _, k := range tk.kinds {
					out = append(out, tableCase{row, k, cell(texts[col], row.state, k, false), texts[col]})
				}
			}
		}
	}
	return out
}

// humanOutcome is § 4's last bullet and § 6.4: a human's decide, close, defer, reject,
// obsolete and reopen apply from any state, in any step, without end points; a confirmed
// closed still needs reopen first; ask, answer and note follow the table.
func humanOutcome(c tableCase) outcome {
	switch {
	case c.kind == protocol.KindAsk || c.kind == protocol.KindNote || c.kind == protocol.KindAnswer:
		return cell(c.text, c.row.state, c.kind, true)
	case c.row.locked && c.kind != protocol.KindReopen:
		return outcome{reason: protocol.ReasonThreadClosed}
	}
	return outcome{state: c.kind.Target()}
}

func TestTransitionTableCoversEveryPair(t *testing.T) {
	seen := map[string]bool{}
	for _, c := range tableCases() {
		seen[c.row.name+" "+string(c.kind)] = true
	}
	if want := 8 * 9; len(seen) != want {
		t.Fatalf("the table has %d (state, kind) pairs, want %d", len(seen), want)
	}
}

func TestNextFollowsTheTable(t *testing.T) {
	for _, c := range tableCases() {
		for _, human := range []bool{false, true} {
			want := c.model
			who := "model"
			if human {
				want, who = humanOutcome(c), "human"
			}
			next, err := protocol.Next(c.row.state, c.row.locked, c.kind, human)
			got := outcome{state: next}
			if err != nil {
				got = outcome{reason: err.Reason}
				if next != "" {
					t.Errorf("Next(%s, %s, %s) refuses but also returns %q", c.row.name, c.kind, who, next)
				}
			}
			if got != want {
				t.Errorf("Next(%s, %s) for a %s = %s, want %s (table: %q)", c.row.name, c.kind, who, got, want, c.text)
			}
		}
	}
}

// The manifest's transitions are exactly the pairs Next accepts from a thread that is not
// confirmed closed: the model's marked as for everyone, the rest as human only.
func TestManifestTransitionsAgreeWithNext(t *testing.T) {
	svc := protocol.New(nil, protocol.Options{})
	listed := map[[2]string]protocol.TransitionInfo{}
	for _, tr := range svc.Manifest(nil).Transitions {
		key := [2]string{string(tr.From), string(tr.Kind)}
		if _, dup := listed[key]; dup {
			t.Errorf("transition %s/%s is listed twice", tr.From, tr.Kind)
		}
		listed[key] = tr
	}
	for _, c := range tableCases() {
		if c.row.locked {
			continue // a confirmed closed is closed in the list; the lock is a flag, not a state
		}
		key := [2]string{string(c.row.state), string(c.kind)}
		tr, ok := listed[key]
		delete(listed, key)
		h := humanOutcome(c)
		switch {
		case c.model.reason == "":
			if !ok || tr.To != c.model.state || tr.HumanOnly {
				t.Errorf("%s --%s--> %s: manifest lists %+v (present %v)", c.row.name, c.kind, c.model.state, tr, ok)
			}
		case h.reason == "":
			if !ok || tr.To != h.state || !tr.HumanOnly {
				t.Errorf("%s --%s--> %s for humans only: manifest lists %+v (present %v)", c.row.name, c.kind, h.state, tr, ok)
			}
		case ok:
			t.Errorf("%s --%s--> is refused for everyone, but the manifest lists %+v", c.row.name, c.kind, tr)
		}
	}
	for _, tr := range listed {
		t.Errorf("the manifest lists %+v, which is no pair of the table", tr)
	}
}

// The same table end to end: a fresh thread is driven into each state with real acts, the
// act is sent through Send, and the thread's state (or the refusal) is compared with the
// table; one event is written when the state changes, none when it stays.
func TestSendFollowsTheTable(t *testing.T) {
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		f := newCast(t, db)
		for _, c := range tableCases() {
			for _, human := range []bool{false, true} {
				want, who := c.model, "model"
				if human {
					want, who = humanOutcome(c), "human"
				}
				t.Run(who+"/"+c.row.name+"/"+string(c.kind), func(t *testing.T) {
					th := f.threadIn(t, c.row)
					before := thread(t, f.svc, th)
					evsBefore := len(events(t, f.svc, th))
					actor := f.actorFor(c, human)
					res, err := f.svc.Send(context.Background(), actor, []byte(envelope(string(c.kind), th, "the act under test")))
					if want.reason != "" {
						wantRefused(t, err, want.reason)
						if got := thread(t, f.svc, th); jsonOf(got) != jsonOf(before) {
							t.Fatalf("a refused act changed the thread:\n%s\n%s", jsonOf(before), jsonOf(got))
						}
						if n := len(events(t, f.svc, th)); n != evsBefore {
							t.Fatalf("a refused act wrote %d events", n-evsBefore)
						}
						return
					}
					if err != nil {
						t.Fatalf("%s %s on %s: %v, want %s", who, c.kind, c.row.name, err, want.state)
					}
					if res.Thread.State != want.state {
						t.Fatalf("%s %s on %s: state %s, want %s", who, c.kind, c.row.name, res.Thread.State, want.state)
					}
					// § 5: a state the act sets counts as its sender's marking; a human's state
					// act leaves the thread confirmed, whatever it was.
					mark := protocol.MarkingOf(actor)
					if before.State != res.Thread.State && (res.Thread.StateOrigin != mark.Origin || (res.Thread.StateConfirmedAt != nil) != mark.Confirmed) {
						t.Fatalf("%s %s on %s: origin %s, confirmed at %v; want %+v", who, c.kind, c.row.name, res.Thread.StateOrigin, res.Thread.StateConfirmedAt, mark)
					}
					if human && c.kind.NeedsThreadAuthority() && res.Thread.StateConfirmedAt == nil {
						t.Fatalf("a human's %s on %s leaves a proposal: %s", c.kind, c.row.name, jsonOf(res.Thread))
					}
					if before.State == res.Thread.State && !mark.Confirmed && !sameTime(before.StateConfirmedAt, res.Thread.StateConfirmedAt) {
						t.Fatalf("%s %s on %s changed no state but its confirmation", who, c.kind, c.row.name)
					}
					changed := before.State != res.Thread.State ||
						(before.StateConfirmedAt == nil) != (res.Thread.StateConfirmedAt == nil)
					wantEvents := 0
					if changed {
						wantEvents = 1
					}
					if n := len(events(t, f.svc, th)) - evsBefore; n != wantEvents {
						t.Fatalf("%s %s on %s (%s -> %s) wrote %d events, want %d", who, c.kind, c.row.name, before.State, res.Thread.State, n, wantEvents)
					}
				})
			}
		}
	})
}

// cast is the people of the end-to-end tests: alice opens threads, bob answers them, carol
// speaks without authority, mod holds lock and ada is a human.
type cast struct {
	svc                    *protocol.Service
	alice, bob, carol, mod *protocol.Actor
	ada                    *protocol.Actor
}

func newCast(t *testing.T, db *storage.DB) *cast {
	return &cast{
		svc:   newService(t, db),
		alice: agent("alice", "read,write"),
		bob:   agent("bob", "read,write"),
		carol: agent("carol", "read,write"),
		mod:   agent("mod", "read,write,lock"),
		ada:   human("ada"),
	}
}

// threadIn drives a fresh thread into the row's state with real acts: alice asks, bob
// answers, alice decides or closes (proposals), mod confirms; side states are alice's.
func (f *cast) threadIn(t *testing.T, row tableRow) string {
	t.Helper()
	th := send(t, f.svc, f.alice, envelope("ask", "", "A question to drive into "+row.name)).Thread.ID
	if row.state != protocol.StateOpen && !row.state.IsSide() {
		send(t, f.svc, f.bob, envelope("answer", th, "an answer"))
	}
	switch row.state {
	case protocol.StateDecided:
		send(t, f.svc, f.alice, envelope("decide", th, "the decision"))
	case protocol.StateClosed:
		send(t, f.svc, f.alice, envelope("close", th, "closing"))
		if row.locked {
			if _, err := f.svc.Confirm(context.Background(), f.mod, []byte(jsonOf(map[string]any{"thread": th}))); err != nil {
				t.Fatalf("confirm: %v", err)
			}
		}
	case protocol.StateDeferred, protocol.StateObsolete, protocol.StateRejected:
		send(t, f.svc, f.alice, envelope(sideKind(row.state), th, "parking"))
	}
	got := thread(t, f.svc, th)
	if got.State != row.state || got.Locked != row.locked {
		t.Fatalf("driving a thread into %s gave %s (locked %v)", row.name, got.State, got.Locked)
	}
	return th
}

// actorFor is who sends the act: the human; else carol for ask, answer and note (no
// authority needed, and none of the messages is hers), alice the creator for the acts that
// need authority, and mod for the moderator's reopen of a side state.
func (f *cast) actorFor(c tableCase, human bool) *protocol.Actor {
	switch {
	case human:
		return f.ada
	case !c.kind.NeedsThreadAuthority():
		return f.carol
	case c.kind == protocol.KindReopen && c.row.state.IsSide():
		return f.mod
	}
	return f.alice
}

// sideKind is the act that leads to a side state.
func sideKind(s protocol.State) string {
	for _, k := range protocol.Kinds {
		if k.Marks != nil && *k.Marks == s {
			return string(k.Kind)
		}
	}
	panic("no kind marks " + s)
}
