package protocol_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/parleyforum/parley/protocol"
	"github.com/parleyforum/parley/storage"
	"github.com/parleyforum/parley/storage/storagetest"
)

const (
	concWriters = 16
	concOps     = 25
)

// concResult is one operation of a writer and what it was told.
type concResult struct {
	who   *refActor
	what  string
	sent  *protocol.SendResult
	moved *protocol.ModerationResult
	err   error
}

// TestConcurrentWritersOneThread lets 16 writers at once into one thread: 14 agents (7
// identities, two extensions each) ask, answer and note with default or explicit parents,
// while the creator decides and closes (proposals) and a lock holder confirms, closes, reopens
// and decides. Afterwards nothing is lost or doubled, every writer was told the truth, and
// the event log is a chain of transitions § 4 allows that replays to the thread. Every
// refusal is a protocol refusal for a reason the race explains; a server fault, a busy
// database (unavailable) or a deadlock fails the test.
func TestConcurrentWritersOneThread(t *testing.T) {
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		limits := protocol.DefaultLimits()
		limits.WritesPerMinute = 1 << 20 // the writers are fast; the rate limit is not the subject
		svc := protocol.New(db, protocol.Options{Limits: limits})
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()

		creator := &refActor{identity: "ainotes:owner", exts: []string{"root", "x"}, write: true,
			actor: refProtocolActor("ainotes:owner", "read,write", false)}
		mod := &refActor{identity: "ainotes:mod", exts: []string{""}, write: true, lock: true,
			actor: refProtocolActor("ainotes:mod", "read,write,lock", false)}
		opened, err := svc.Send(ctx, creator.actor, []byte(`{"kind":"ask","body":"Where do we meet?","from":{"extension":"root"}}`))
		if err != nil {
			t.Fatal(err)
		}
		th := opened.Thread.ID

		seed := uint64(time.Now().UnixNano())
		t.Logf("seed %d", seed)
		var (
			mu      sync.Mutex
			results []concResult
			ids     = []string{opened.Message.ID} // accepted messages, for explicit parents
		)
		pickParent := func(rng *rand.Rand) string {
			mu.Lock()
			defer mu.Unlock()
			return ids[rng.IntN(len(ids))]
		}
		start := make(chan struct{})
		var wg sync.WaitGroup
		for w := range concWriters {
			wg.Add(1)
			go func() {
				defer wg.Done()
				rng := rand.New(rand.NewPCG(seed, uint64(w)))
				var who *refActor
				switch w {
				case concWriters - 2:
					who = creator
				case concWriters - 1:
					who = mod
				default:
					id := fmt.Sprintf("ainotes:w%d", w/2)
					who = &refActor{identity: id, exts: []string{fmt.Sprintf("e%d", w%2)}, write: true,
						actor: refProtocolActor(id, "read,write", false)}
				}
				<-start
				for i := range concOps {
					r := concResult{who: who}
					env := map[string]any{"thread": th, "from": map[string]any{"extension": who.exts[len(who.exts)-1]}}
					n := rng.IntN(100)
					switch {
					case who == mod && n < 35:
						r.what = "confirm"
						r.moved, r.err = svc.Confirm(ctx, mod.actor, refJSON(map[string]any{"thread": th}))
					case who == mod:
						env["kind"] = []string{"close", "reopen", "reopen", "decide"}[n%4]
					case who == creator:
						env["kind"] = []string{"answer", "note", "decide", "decide", "close"}[n%5]
					case n < 40:
						env["kind"] = "answer"
					case n < 70:
						env["kind"] = "note"
					default:
						env["kind"] = "ask"
					}
					if r.what == "" {
						if rng.IntN(2) == 0 {
							env["parent"] = pickParent(rng)
						}
						env["body"] = fmt.Sprintf("%s %d by writer %d", env["kind"], i, w)
						r.what = fmt.Sprintf("%s (parent %v)", env["kind"], env["parent"])
						r.sent, r.err = svc.Send(ctx, who.actor, refJSON(env))
						if r.err == nil {
							mu.Lock()
							ids = append(ids, r.sent.Message.ID)
							mu.Unlock()
						}
					}
					mu.Lock()
					results = append(results, r)
					mu.Unlock()
				}
			}()
		}
		began := time.Now()
		close(start)
		wg.Wait()
		t.Logf("%d operations by %d writers in %v", len(results), concWriters, time.Since(began))

		concCheck(t, svc, th, opened, results, creator, mod)
	})
}

// concCheck holds the thread, its event log and what every writer was told against each other.
func concCheck(t *testing.T, svc *protocol.Service, th string, opened *protocol.SendResult, results []concResult, creator, mod *refActor) {
	t.Helper()
	ctx := context.Background()
	reader := refProtocolActor("ainotes:auditor", "read", false)

	// Refusals: only what a race between legitimate writers explains.
	refused := map[protocol.Reason]int{}
	countOf := map[string]int{opened.Message.ID: 1} // accepted message → message_count after it
	var counts []int
	for _, r := range results {
		if r.err != nil {
			e, ok := protocol.AsError(r.err)
			if !ok {
				t.Fatalf("%s by %s: a server fault: %v", r.what, r.who.identity, r.err)
			}
			switch e.Reason {
			case protocol.ReasonSelfReply, protocol.ReasonThreadClosed, protocol.ReasonInvalidTransition:
				refused[e.Reason]++
			default:
				t.Fatalf("%s by %s: refused with %s (%s), which no race between these writers explains", r.what, r.who.identity, e.Reason, e.Message)
			}
			continue
		}
		if r.sent != nil {
			if _, dup := countOf[r.sent.Message.ID]; dup {
				t.Fatalf("message %s was handed out twice", r.sent.Message.ID)
			}
			countOf[r.sent.Message.ID] = r.sent.Thread.MessageCount
			counts = append(counts, r.sent.Thread.MessageCount)
		}
	}
	t.Logf("accepted %d messages; refused %v", len(counts), refused)

	// No lost update: each accepted send saw every message committed before it, so the counts
	// the writers were told are exactly 2 … n+1.
	sort.Ints(counts)
	for i, c := range counts {
		if c != i+2 {
			t.Fatalf("of %d accepted sends, the %d-th in order was told message_count %d, not %d: an update was lost or doubled",
				len(counts), i+1, c, i+2)
		}
	}

	// No lost or doubled message: the thread holds the root and every accepted message once.
	read, err := svc.ReadThread(ctx, reader, refJSON(map[string]any{"thread": th}))
	if err != nil {
		t.Fatal(err)
	}
	inTree := map[string]int{}
	var walk func([]*protocol.MessageView)
	walk = func(ms []*protocol.MessageView) {
		for _, m := range ms {
			inTree[m.ID]++
			walk(m.Replies)
		}
	}
	walk(read.Messages)
	for id, n := range inTree {
		if _, ok := countOf[id]; !ok || n != 1 {
			t.Errorf("message %s is in the thread %d times; accepted: %v", id, n, ok)
		}
	}
	for id := range countOf {
		if inTree[id] != 1 {
			t.Errorf("accepted message %s is in the thread %d times", id, inTree[id])
		}
	}
	if read.Thread.MessageCount != len(countOf) || len(inTree) != len(countOf) {
		t.Fatalf("message_count %d, %d messages in the tree, %d accepted (with the root)", read.Thread.MessageCount, len(inTree), len(countOf))
	}

	// The event log: a chain of transitions § 4 and § 6 allow, which replays to the thread.
	evs, err := refEvents(svc, reader, th)
	if err != nil {
		t.Fatal(err)
	}
	got, err := refReplay(evs)
	if err != nil {
		t.Fatalf("the events do not replay: %v", err)
	}
	v := read.Thread
	want := refReplayed{state: string(v.State), origin: v.StateOrigin, confirmed: v.StateConfirmedAt != nil, confirmedState: string(v.ConfirmedState)}
	if got != want {
		t.Fatalf("the events replay to %+v; the thread is %+v", got, want)
	}
	actors := map[string]*refActor{creator.identity: creator, mod.identity: mod}
	moderated := map[string]*concResult{} // event id → the confirm that wrote it
	for i := range results {
		if r := &results[i]; r.moved != nil {
			moderated[r.moved.Event.ID] = r
		}
	}
	type step struct {
		state     string
		confirmed bool
		count     int // message_count when the event was written
		rank      int // 0 for an event of a message, 1 for a confirm after it
	}
	steps := make([]step, len(evs))
	state, confirmed := "", false
	for i, ev := range evs {
		who := actors[ev.Actor.Identity]
		if i > 0 && ev.Act != "confirm" {
			thread := &refThread{state: state, confirmed: confirmed, creator: creator.identity}
			if who == nil {
				who = &refActor{identity: ev.Actor.Identity, write: true}
			}
			next, reason := refNext(state, confirmed, ev.Act, who.human)
			if reason == "" && !refHasAuthority(who, thread, ev.Act) {
				reason = "thread_authority_missing"
			}
			sameState := next == state && string(ev.To) == state && who.lock && !confirmed && refMarks[ev.Act] == state
			if reason != "" || (string(ev.To) != next) || (next == state && !sameState) {
				t.Fatalf("event #%d: %s by %s takes %s (confirmed %v) to %s; § 4 says %q %s", i+1, ev.Act, ev.Actor.Identity, state, confirmed, ev.To, next, reason)
			}
			if refRank(string(ev.To)) < refRank(state) && ev.Act != "reopen" {
				t.Fatalf("event #%d: %s moves the state backwards, %s to %s", i+1, ev.Act, state, ev.To)
			}
		}
		if ev.Act == "confirm" {
			if who != mod || confirmed {
				t.Fatalf("event #%d: a confirm by %s of a state confirmed %v", i+1, ev.Actor.Identity, confirmed)
			}
			r, ok := moderated[ev.ID]
			if !ok {
				t.Fatalf("event #%d: a confirm no writer was told of", i+1)
			}
			steps[i].count, steps[i].rank = r.moved.Thread.MessageCount, 1
			confirmed = true
		} else {
			if ev.Message == nil {
				t.Fatalf("event #%d (%s) names no message", i+1, ev.Act)
			}
			c, ok := countOf[*ev.Message]
			if !ok {
				t.Fatalf("event #%d (%s) is of %s, which no writer was told was accepted", i+1, ev.Act, *ev.Message)
			}
			steps[i].count = c
			state = string(ev.To)
			confirmed = ev.Confirmed && !refLaterConfirm(evs[i+1:], ev.ID) // confirmed at once
		}
		steps[i].state, steps[i].confirmed = state, confirmed
		if i > 0 && (steps[i].count < steps[i-1].count || (steps[i].count == steps[i-1].count && steps[i].rank < steps[i-1].rank)) {
			t.Fatalf("event #%d comes after message %d in the log but was written before it", i+1, steps[i-1].count)
		}
	}

	// Every writer was told the state the log had at its place in the commit order.
	stateAt := func(count, rank int) step {
		at := steps[0]
		for _, s := range steps {
			if s.count < count || (s.count == count && s.rank <= rank) {
				at = s
			}
		}
		return at
	}
	for _, r := range results {
		var told *protocol.ThreadView
		var at step
		switch {
		case r.sent != nil:
			told, at = r.sent.Thread, stateAt(r.sent.Thread.MessageCount, 0)
		case r.moved != nil:
			told = r.moved.Thread
			for i, ev := range evs {
				if ev.ID == r.moved.Event.ID {
					at = steps[i]
				}
			}
		default:
			continue
		}
		if string(told.State) != at.state || (told.StateConfirmedAt != nil) != at.confirmed {
			t.Fatalf("%s by %s was told %s (confirmed %v); the log has %s (confirmed %v) there",
				r.what, r.who.identity, told.State, told.StateConfirmedAt != nil, at.state, at.confirmed)
		}
	}
	t.Logf("%d events, final state %s (confirmed %v)", len(evs), v.State, v.StateConfirmedAt != nil)
}

// refLaterConfirm reports whether a later confirm names the event id.
func refLaterConfirm(later []*protocol.EventView, id string) bool {
	for _, ev := range later {
		if ev.Act == "confirm" && ev.Confirms != nil && *ev.Confirms == id {
			return true
		}
	}
	return false
}

// refRank is a main state's place on the forward path of § 4; side states rank with decided
// (open, answered and decided may move to them; only reopen leaves them).
func refRank(state string) int {
	switch state {
	case "open":
		return 0
	case "answered":
		return 1
	case "decided":
		return 2
	case "closed":
		return 3
	}
	return 2
}
