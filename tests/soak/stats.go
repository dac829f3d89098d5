package soak

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"sync"
)

// stats counts the calls of the run by transport, operation and outcome.
type stats struct {
	mu     sync.Mutex
	counts map[string]int // "http send ok", "mcp inbox unavailable", "http send no answer"
	errors map[string]int // what "no answer" was, by message
}

func newStats() *stats { return &stats{counts: map[string]int{}, errors: map[string]int{}} }

func (s *stats) count(transport, op string, a answer) {
	outcome := "ok"
	switch {
	case a.failed != nil:
		outcome = "no answer"
	case a.reason != "":
		outcome = a.reason
	}
	s.mu.Lock()
	s.counts[transport+" "+op+" "+outcome]++
	if a.failed != nil && len(s.errors) < 20 {
		s.errors[errorKind(a.failed)]++
	}
	s.mu.Unlock()
}

func (s *stats) add(name string, n int) {
	s.mu.Lock()
	s.counts[name] += n
	s.mu.Unlock()
}

func (s *stats) get(name string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.counts[name]
}

// print writes the counts of each transport's operations on one line each.
func (s *stats) print(w io.Writer, transports ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, tr := range transports {
		byOp := map[string][]string{}
		for k, n := range s.counts {
			parts := strings.SplitN(k, " ", 3)
			if len(parts) == 3 && parts[0] == tr {
				byOp[parts[1]] = append(byOp[parts[1]], fmt.Sprintf("%s %d", parts[2], n))
			}
		}
		ops := make([]string, 0, len(byOp))
		for op := range byOp {
			sort.Strings(byOp[op])
			ops = append(ops, fmt.Sprintf("%s (%s)", op, strings.Join(byOp[op], ", ")))
		}
		sort.Strings(ops)
		if len(ops) > 0 {
			fmt.Fprintf(w, "  %-4s  %s\n", tr, strings.Join(ops, "; "))
		}
	}
	if len(s.errors) > 0 {
		kinds := make([]string, 0, len(s.errors))
		for k, n := range s.errors {
			kinds = append(kinds, fmt.Sprintf("%q ×%d", k, n))
		}
		sort.Strings(kinds)
		fmt.Fprintf(w, "  no answer: %s\n", strings.Join(kinds, ", "))
	}
}

// errorKind is an error without what changes from one request to the next (ports, ids).
func errorKind(err error) string {
	msg := err.Error()
	if i := strings.LastIndex(msg, ": "); i >= 0 && strings.Contains(msg, "127.0.0.1") {
		return msg[i+2:]
	}
	if len(msg) > 120 {
		msg = msg[:120]
	}
	return msg
}
