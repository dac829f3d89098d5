package main

import (
	"math/rand/v2"
	"strconv"
	"sync"
)

// The conversations the agents hold, the same for the server and for the baseline: each
// agent keeps up to two questions of its own open, answers and notes under the questions of
// others, and once a question of its own has had decideAfter replies it decides it and then
// closes it. Replies name the question as their parent, so no agent ever replies to itself
// (self_reply); decide and close are the asker's own; a close by an agent without the lock
// right is a proposal, which locks nothing, so replies already on their way are accepted too.
// Done right, the server refuses nothing.

const (
	ownQuestions = 2 // questions an agent keeps open at once
	decideAfter  = 8 // replies after which the asker decides
)

// bodies are the messages' texts by kind, around the number of the message: prefix, then the
// number, then suffix. The pgbench baseline writes the same texts (pgbench.go), so that both
// store, index and search bodies of one length distribution.
var bodies = map[string][2]string{
	"ask":    {"Question ", ": which limit applies when a client sends a batch of envelopes at once?"},
	"ask2":   {"Question ", ": how long may an inbox long poll wait?"},
	"answer": {"Answer ", ": writes_per_minute in the manifest; the server refuses the excess with rate_limited and retry_after."},
	"note":   {"Note ", ": the same limit holds over MCP; both transports call one operation layer."},
	"decide": {"Decision ", ": we keep the limit the manifest shows and read it before sending."},
	"close":  {"Closing ", ": the decision above stands; thank you all."},
}

// bodyOf is the text of message number n of a kind.
func bodyOf(kind, n string) string { return bodies[kind][0] + n + bodies[kind][1] }

// step is one message an agent is about to send.
type step struct {
	kind   string  // ask, answer, note, decide, close
	thread *thread // nil for an ask
	// from and to are the state change the scheduler expects the message to make (equal
	// when none): the baseline writes the event for it, the server decides for itself.
	from, to string
	body     string
	cursor   string // an inbox's since: the agent's last cursor
	query    string // a search's q
	// key is a write's idempotency key (§ 15), "" without --keys: a write whose answer did not
	// come is sent again under it, and lands once.
	key string
}

// thread is a question as the scheduler knows it.
type thread struct {
	id, root int64
	asker    int    // the agent that asked it
	state    string // what the scheduler expects: open, answered, decided, closed
	replies  int
}

// board is the shared state of one run's conversations.
type board struct {
	mu      sync.Mutex
	agents  int
	open    []*thread         // questions that take replies
	mine    map[int][]*thread // each agent's questions not yet closed
	counter int               // numbers the bodies
	cursors map[int]string    // each agent's last inbox cursor
	keys    string            // the prefix of the writes' idempotency keys, "" for none
}

func newBoard(agents int) *board {
	return &board{agents: agents, mine: map[int][]*thread{}, cursors: map[int]string{}}
}

// next chooses agent a's next message, with its idempotency key.
func (b *board) next(a int, rng *rand.Rand) step {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.counter++
	n := strconv.Itoa(b.counter)
	st := b.choose(a, n, rng)
	if b.keys != "" {
		st.key = b.keys + n
	}
	return st
}

// choose is agent a's next message, number n.
func (b *board) choose(a int, n string, rng *rand.Rand) step {
	for _, t := range b.mine[a] {
		switch {
		case t.state == "decided":
			b.retire(t)
			return step{kind: "close", thread: t, from: "decided", to: "closed", body: bodyOf("close", n)}
		case t.replies >= decideAfter:
			from := t.state
			t.state = "decided"
			return step{kind: "decide", thread: t, from: from, to: "decided", body: bodyOf("decide", n)}
		}
	}
	if len(b.mine[a]) < ownQuestions {
		return step{kind: "ask", from: "", to: "open", body: bodyOf("ask", n)}
	}
	for range 8 {
		if len(b.open) == 0 {
			break
		}
		t := b.open[rng.IntN(len(b.open))]
		if t.asker == a {
			continue
		}
		t.replies++
		if rng.IntN(4) == 0 {
			return step{kind: "note", thread: t, from: t.state, to: t.state, body: bodyOf("note", n)}
		}
		from := t.state
		if from == "open" {
			t.state = "answered"
		}
		return step{kind: "answer", thread: t, from: from, to: t.state, body: bodyOf("answer", n)}
	}
	// Nobody else has a question open yet: ask one more.
	return step{kind: "ask", from: "", to: "open", body: bodyOf("ask2", n)}
}

// asked records a question that agent a's ask opened.
func (b *board) asked(a int, id, root int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	t := &thread{id: id, root: root, asker: a, state: "open"}
	b.open = append(b.open, t)
	b.mine[a] = append(b.mine[a], t)
}

// retire takes a closed question off the board.
func (b *board) retire(t *thread) {
	t.state = "closed"
	for i, o := range b.open {
		if o == t {
			b.open = append(b.open[:i], b.open[i+1:]...)
			break
		}
	}
	mine := b.mine[t.asker]
	for i, o := range mine {
		if o == t {
			b.mine[t.asker] = append(mine[:i], mine[i+1:]...)
			break
		}
	}
}
