package soak

import (
	"fmt"
	"sync"
)

// write is one write an agent meant to make: the marker in its body names it, whatever
// became of it. A write is acknowledged once an answer carried its message; until then it is
// sent again, as a real client would, under the same idempotency key (§ 15): however many
// attempts landed, it must be stored at most once, and a second copy is a double landing.
type write struct {
	marker    string
	key       string // its idempotency key, the same on every attempt
	agent     int    // -1: a client that walked away without reading its answer
	transport string
	kind      string
	body      string
	thread    int64 // the thread it was sent to, 0 for a new thread
	attempts  int
	acked     bool
	id        int64 // the message the acknowledgement named
	ackThread int64 // the thread the acknowledgement named
}

// ledger is every write of the run.
type ledger struct {
	mu     sync.Mutex
	writes map[string]*write
	seq    int
	run    string // this run's part of every marker
}

func newLedger(run string) *ledger { return &ledger{writes: map[string]*write{}, run: run} }

// open names a new write, its body the marker and then text, and records it before its first
// attempt. The write's fields other than attempts and acknowledgement never change after.
func (l *ledger) open(agent int, transport, kind string, thread int64, text string) *write {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.seq++
	marker := fmt.Sprintf("[soak %s #%d]", l.run, l.seq)
	w := &write{marker: marker, key: fmt.Sprintf("soak-%s-%d", l.run, l.seq), agent: agent, transport: transport, kind: kind,
		thread: thread, body: marker + " " + text}
	l.writes[w.marker] = w
	return w
}

func (l *ledger) attempt(w *write) {
	l.mu.Lock()
	w.attempts++
	l.mu.Unlock()
}

func (l *ledger) ack(w *write, id, thread int64) {
	l.mu.Lock()
	w.acked, w.id, w.ackThread = true, id, thread
	l.mu.Unlock()
}

func (l *ledger) all() []write {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]write, 0, len(l.writes))
	for _, w := range l.writes {
		out = append(out, *w)
	}
	return out
}
