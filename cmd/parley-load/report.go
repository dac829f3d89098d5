package main

import (
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

// stats gathers one mode's requests across its rounds.
type stats struct {
	mu       sync.Mutex
	lat      map[string][]time.Duration // by operation
	accepted int
	refused  map[string]int
	elapsed  time.Duration
	rounds   []float64 // sends per second, each round
}

func newStats() *stats { return &stats{lat: map[string][]time.Duration{}, refused: map[string]int{}} }

func (s *stats) add(lat map[string][]time.Duration, accepted int, refused map[string]int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for op, l := range lat {
		s.lat[op] = append(s.lat[op], l...)
	}
	s.accepted += accepted
	for r, n := range refused {
		s.refused[r] += n
	}
}

// addRound records one round: its accepted sends and its time.
func (s *stats) addRound(sends int, d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.elapsed += d
	if d > 0 {
		s.rounds = append(s.rounds, float64(sends)/d.Seconds())
	}
}

// summary is one mode's figures.
type summary struct {
	Mode       string         `json:"mode"`
	Requests   int            `json:"requests"`
	Accepted   int            `json:"accepted"`
	Refused    map[string]int `json:"refused"`
	Seconds    float64        `json:"seconds"`
	Throughput float64        `json:"requests_per_second"`
	// SendsPerSecond is the median of the rounds' accepted sends per second: the figure
	// the ratios compare.
	SendsPerSecond float64     `json:"sends_per_second"`
	Rounds         []float64   `json:"rounds_sends_per_second"`
	P50            float64     `json:"p50_ms"`
	P90            float64     `json:"p90_ms"`
	P99            float64     `json:"p99_ms"`
	Max            float64     `json:"max_ms"`
	Operations     []opSummary `json:"operations"`
	// What one request cost, in ms of CPU: the server's (HTTP and MCP modes), Postgres's (all
	// its processes), the client's (this tool, and pgbench for the pgbench modes); and the
	// statements Postgres ran per request, top-level (each a round trip) and nested (by
	// triggers and functions). Absent when not measured.
	ServerCPU   *float64 `json:"server_cpu_ms_per_request,omitempty"`
	DatabaseCPU *float64 `json:"database_cpu_ms_per_request,omitempty"`
	ClientCPU   *float64 `json:"client_cpu_ms_per_request,omitempty"`
	Statements  *float64 `json:"statements_per_request,omitempty"`
	Nested      *float64 `json:"nested_statements_per_request,omitempty"`
	// TopStatements are the statements that took Postgres the most time in this mode.
	TopStatements []statementCost `json:"top_statements,omitempty"`
}

// statementCost is one statement's share of a mode: its calls and its execution time (waits
// for locks included) per request.
type statementCost struct {
	Query    string  `json:"query"`
	Nested   bool    `json:"nested"`
	Calls    float64 `json:"calls_per_request"`
	ExecMS   float64 `json:"exec_ms_per_request"`
	MSPerRun float64 `json:"exec_ms_per_call"`
}

// topStatements is how many statements a mode's report lists.
const topStatements = 8

// cost divides what the mode's processes spent by its requests.
func (s *summary) cost(mode string, u *usage) {
	if s.Requests == 0 {
		return
	}
	per := func(d time.Duration) *float64 { v := ms(d) / float64(s.Requests); return &v }
	if u.ServerOK && servedBy(mode) {
		s.ServerCPU = per(u.Server)
	}
	if u.DatabaseOK {
		s.DatabaseCPU = per(u.Database)
	}
	s.ClientCPU = per(u.Tool)
	if u.StatementsOK {
		top, nested := float64(u.Top)/float64(s.Requests), float64(u.Nested)/float64(s.Requests)
		s.Statements, s.Nested = &top, &nested
		for k, st := range u.Each {
			s.TopStatements = append(s.TopStatements, statementCost{Query: st.query, Nested: !k.toplevel,
				Calls: float64(st.calls) / float64(s.Requests), ExecMS: st.ms / float64(s.Requests), MSPerRun: st.ms / float64(st.calls)})
		}
		sort.Slice(s.TopStatements, func(i, j int) bool { return s.TopStatements[i].ExecMS > s.TopStatements[j].ExecMS })
		s.TopStatements = s.TopStatements[:min(len(s.TopStatements), topStatements)]
	}
}

// opSummary is the latency of one operation in one mode.
type opSummary struct {
	Op       string  `json:"operation"`
	Requests int     `json:"requests"`
	P50      float64 `json:"p50_ms"`
	P90      float64 `json:"p90_ms"`
	P99      float64 `json:"p99_ms"`
	Max      float64 `json:"max_ms"`
	// Tail is p99 / p50; the target is at most 10 at 16 agents.
	Tail float64 `json:"p99_over_p50"`
}

func (s *stats) summary(name string) summary {
	s.mu.Lock()
	defer s.mu.Unlock()
	sum := summary{Mode: name, Accepted: s.accepted, Refused: s.refused, Seconds: s.elapsed.Seconds(), Rounds: s.rounds}
	var all []time.Duration
	for _, op := range operations {
		lat := s.lat[op]
		if len(lat) == 0 {
			continue
		}
		all = append(all, lat...)
		o := opSummary{Op: op, Requests: len(lat)}
		o.P50, o.P90, o.P99, o.Max = percentiles(lat)
		if o.P50 > 0 {
			o.Tail = o.P99 / o.P50
		}
		sum.Operations = append(sum.Operations, o)
	}
	sum.Requests = len(all)
	sum.P50, sum.P90, sum.P99, sum.Max = percentiles(all)
	if s.elapsed > 0 {
		sum.Throughput = float64(len(all)) / s.elapsed.Seconds()
	}
	sum.SendsPerSecond = median(s.rounds)
	return sum
}

// percentiles are p50, p90, p99 and the maximum of lat in milliseconds; lat is sorted.
func percentiles(lat []time.Duration) (p50, p90, p99, maxMS float64) {
	n := len(lat)
	if n == 0 {
		return 0, 0, 0, 0
	}
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	q := func(p float64) float64 { return ms(lat[min(n-1, int(p*float64(n)))]) }
	return q(0.50), q(0.90), q(0.99), ms(lat[n-1])
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// report is a run's result.
type report struct {
	Agents int       `json:"agents"`
	Rounds int       `json:"rounds"`
	Mix    string    `json:"mix"`
	Modes  []summary `json:"modes"`
	// Ratios are the modes' median sends per second over each other's, for the pairs of
	// ratioPairs that ran.
	Ratios []ratio `json:"ratios,omitempty"`
	// Ratio is the first mode's over the second's, when exactly two ran.
	Ratio  *float64      `json:"ratio,omitempty"`
	Memory *memoryReport `json:"memory,omitempty"`
}

// ratio is one mode's sends per second over another's.
type ratio struct {
	Name  string  `json:"name"` // "http / pgbench"
	Value float64 `json:"value"`
}

func (r *report) ratios() {
	by := map[string]summary{}
	for _, m := range r.Modes {
		by[m.Mode] = m
	}
	for _, p := range ratioPairs {
		a, okA := by[p[0]]
		b, okB := by[p[1]]
		if okA && okB && b.SendsPerSecond > 0 {
			r.Ratios = append(r.Ratios, ratio{Name: p[0] + " / " + p[1], Value: a.SendsPerSecond / b.SendsPerSecond})
		}
	}
	if len(r.Modes) == 2 && r.Modes[1].SendsPerSecond > 0 {
		v := r.Modes[0].SendsPerSecond / r.Modes[1].SendsPerSecond
		r.Ratio = &v
	}
}

// print writes the report as Markdown tables, to paste into docs/performance.md as they are.
func (r report) print(w io.Writer, sendsOnly bool) {
	fmt.Fprintf(w, "\n| mode | sends/s (median of %d) | each round | requests | refused |\n|---|---:|---|---:|---|\n", r.Rounds)
	for _, m := range r.Modes {
		rounds := make([]string, len(m.Rounds))
		for i, x := range m.Rounds {
			rounds[i] = fmt.Sprintf("%.0f", x)
		}
		fmt.Fprintf(w, "| %s | %.1f | %s | %d | %s |\n", m.Mode, m.SendsPerSecond, strings.Join(rounds, ", "), m.Requests, refusedText(m.Refused))
	}
	if len(r.Ratios) > 0 {
		fmt.Fprintf(w, "\n| ratio of sends/s | value |\n|---|---:|\n")
		for _, x := range r.Ratios {
			fmt.Fprintf(w, "| %s | %.3f |\n", x.Name, x.Value)
		}
		if !sendsOnly {
			fmt.Fprintln(w, "\n(The mix has more than sends: the server's sends share its time with reads, a baseline's do not; compare a server with a baseline with --mix send.)")
		}
	}
	fmt.Fprintf(w, "\n| mode | operation | requests | p50 ms | p90 ms | p99 ms | max ms | p99/p50 |\n|---|---|---:|---:|---:|---:|---:|---:|\n")
	for _, m := range r.Modes {
		for _, o := range m.Operations {
			fmt.Fprintf(w, "| %s | %s | %d | %.2f | %.2f | %.2f | %.2f | %.1f |\n", m.Mode, o.Op, o.Requests, o.P50, o.P90, o.P99, o.Max, o.Tail)
		}
	}
	fmt.Fprintf(w, "\n| mode | server CPU ms/request | database CPU ms/request | client CPU ms/request | statements/request | nested statements/request |\n|---|---:|---:|---:|---:|---:|\n")
	for _, m := range r.Modes {
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s |\n", m.Mode, opt(m.ServerCPU, 3), opt(m.DatabaseCPU, 3), opt(m.ClientCPU, 3), opt(m.Statements, 2), opt(m.Nested, 2))
	}
	fmt.Fprintln(w, "\n(CPU from the server's /metrics, Postgres's processes in /proc and this tool's rusage with pgbench's; statements from pg_stat_statements; — where not measured.)")
	for _, m := range r.Modes {
		if len(m.TopStatements) == 0 {
			continue
		}
		fmt.Fprintf(w, "\n| %s: statement (pg_stat_statements; nested: by a trigger or function) | calls/request | exec ms/request | ms/call |\n|---|---:|---:|---:|\n", m.Mode)
		for _, st := range m.TopStatements {
			q := strings.ReplaceAll(st.Query, "|", "\\|")
			if st.Nested {
				q = "(nested) " + q
			}
			fmt.Fprintf(w, "| `%s` | %.2f | %.3f | %.3f |\n", q, st.Calls, st.ExecMS, st.MSPerRun)
		}
	}
	if r.Memory != nil {
		r.Memory.print(w)
	}
}

func opt(v *float64, digits int) string {
	if v == nil {
		return "—"
	}
	return strconv.FormatFloat(*v, 'f', digits, 64)
}

func refusedText(refused map[string]int) string {
	if len(refused) == 0 {
		return "none"
	}
	var reasons []string
	for reason, n := range refused {
		reasons = append(reasons, fmt.Sprintf("%s %d", reason, n))
	}
	sort.Strings(reasons)
	return strings.Join(reasons, ", ")
}
