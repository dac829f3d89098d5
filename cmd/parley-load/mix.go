package main

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
)

// The operations an agent does besides sending, each measured on its own.
const (
	opSend        = "send"
	opInbox       = "inbox"        // with the agent's cursor, as a listening agent polls
	opReadThread  = "read_thread"  // a question on the board
	opListThreads = "list_threads" // the newest page
	opSearch      = "search"       // a message's number and a word of it
)

// operations in the order reports list them.
var operations = []string{opSend, opInbox, opReadThread, opListThreads, opSearch}

// mixedPreset is --mix mixed: what an agent in a busy forum does, one step in two a send.
const mixedPreset = "send=50,inbox=20,read_thread=15,list_threads=10,search=5"

// mix is how often each operation comes, as weights.
type mix struct {
	ops     []string
	weights []int
	total   int
}

// parseMix reads "send=50,inbox=20,…", "mixed" (mixedPreset) or "send".
func parseMix(spec string) (*mix, error) {
	if spec == "mixed" {
		spec = mixedPreset
	}
	m := &mix{}
	seen := map[string]bool{}
	for _, part := range strings.Split(spec, ",") {
		name, weight, found := strings.Cut(strings.TrimSpace(part), "=")
		w := 1
		if found {
			var err error
			if w, err = strconv.Atoi(weight); err != nil || w < 0 || w > 1000 {
				return nil, fmt.Errorf("--mix %q: the weight of %s is not a number from 0 to 1000", spec, name)
			}
		}
		if !known(name) {
			return nil, fmt.Errorf("--mix %q: %q is none of %s", spec, name, strings.Join(operations, ", "))
		}
		if seen[name] {
			return nil, fmt.Errorf("--mix %q: %s twice", spec, name)
		}
		seen[name] = true
		if w > 0 {
			m.ops, m.weights, m.total = append(m.ops, name), append(m.weights, w), m.total+w
		}
	}
	if m.total == 0 {
		return nil, fmt.Errorf("--mix %q: nothing to do", spec)
	}
	return m, nil
}

func known(op string) bool {
	for _, o := range operations {
		if o == op {
			return true
		}
	}
	return false
}

// sendsOnly reports whether the mix is sends alone, the measure of throughput.
func (m *mix) sendsOnly() bool { return len(m.ops) == 1 && m.ops[0] == opSend }

// pick draws an operation.
func (m *mix) pick(rng *rand.Rand) string {
	if len(m.ops) == 1 {
		return m.ops[0]
	}
	n := rng.IntN(m.total)
	for i, w := range m.weights {
		if n < w {
			return m.ops[i]
		}
		n -= w
	}
	return m.ops[len(m.ops)-1]
}

func (m *mix) String() string {
	parts := make([]string, len(m.ops))
	for i, op := range m.ops {
		parts[i] = op + "=" + strconv.Itoa(m.weights[i])
	}
	return strings.Join(parts, ",")
}

// read chooses agent a's next read of kind op.
func (b *board) read(a int, op string, rng *rand.Rand) step {
	b.mu.Lock()
	defer b.mu.Unlock()
	switch op {
	case opInbox:
		return step{kind: opInbox, cursor: b.cursors[a]}
	case opReadThread:
		if len(b.open) > 0 {
			return step{kind: opReadThread, thread: b.open[rng.IntN(len(b.open))]}
		}
		return step{kind: opListThreads} // nothing on the board yet
	case opSearch:
		// A message of this run by its number, and a word of its text.
		n := 1 + rng.IntN(max(1, b.counter))
		return step{kind: opSearch, query: strconv.Itoa(n) + " limit"}
	}
	return step{kind: opListThreads}
}

// polled keeps the cursor agent a's inbox answered.
func (b *board) polled(a int, cursor string) {
	if cursor == "" {
		return
	}
	b.mu.Lock()
	b.cursors[a] = cursor
	b.mu.Unlock()
}

// opOf is the operation a step measures.
func opOf(st step) string {
	switch st.kind {
	case opInbox, opReadThread, opListThreads, opSearch:
		return st.kind
	}
	return opSend
}

// sortedOps lists ops in the order of operations.
func sortedOps(ops map[string]bool) []string {
	var out []string
	for _, o := range operations {
		if ops[o] {
			out = append(out, o)
		}
	}
	return out
}
