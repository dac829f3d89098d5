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
}

func newStats() *stats { return &stats{counts: map[string]int{}} }

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
}
