// Command parley-load puts a Parley server under the load of agents holding conversations,
// and measures what it bears: requests per second, latency percentiles, and refusals by
// reason. With --baseline-db it also issues the same writes straight through the database
// driver, in turns with the server, and prints the server's share of that throughput.
//
//	parley-load --url http://127.0.0.1:8080 --db postgres://…/parley --agents 16 --duration 10s
//	parley-load --url http://127.0.0.1:8080 --tokens tokens.txt --requests 20000 \
//	    --baseline-db postgres://…/parley_baseline
//
// Every agent sends one request at a time, the next as soon as the last is answered. The
// server must be started with PARLEY_LIMIT_WRITES_PER_MINUTE raised (e.g. 1000000): its
// default of 120 writes per minute per identity is what a handful of agents send in a second,
// and the excess would be refused as rate_limited (the tool waits as told, and counts them).
// More identities (--identities) spread the same load thinner instead.
//
// The load goes to loopback addresses only, unless --allow-remote; every run is bounded by
// --duration and --requests, whichever ends it first.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/signal"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// Bounds of one run, whatever the flags say.
const (
	maxDuration = 30 * time.Minute
	maxRequests = 10_000_000
	maxAgents   = 1024
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// config is what the flags ask for.
type config struct {
	url         string
	tokensFile  string
	db          string
	baselineDB  string
	agents      int
	identities  int
	duration    time.Duration
	requests    int
	rounds      int
	realm       string
	allowRemote bool
	asJSON      bool
	seed        uint64
}

func parseFlags(args []string, stderr io.Writer) (*config, error) {
	c := &config{}
	fs := flag.NewFlagSet("parley-load", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&c.url, "url", "", "the server, `http://127.0.0.1:PORT`")
	fs.StringVar(&c.tokensFile, "tokens", "", "a `FILE` of agent tokens, one a line (the secret, or the JSON of parley token create --json)")
	fs.StringVar(&c.db, "db", "", "the server's database `URL`, to create the agents' tokens in (instead of --tokens)")
	fs.StringVar(&c.baselineDB, "baseline-db", "", "a database `URL` (its own, not the server's) for the direct-driver baseline")
	fs.IntVar(&c.agents, "agents", 16, "agents sending at once")
	fs.IntVar(&c.identities, "identities", 0, "identities to create with --db (default: one per agent)")
	fs.DurationVar(&c.duration, "duration", 0, "how long each measured mode runs (default 10s unless --requests)")
	fs.IntVar(&c.requests, "requests", 0, "how many requests each measured mode sends at most")
	fs.IntVar(&c.rounds, "rounds", 0, "turns the server and the baseline take (default 3 with both, else 1)")
	fs.StringVar(&c.realm, "realm", "ainotes", "the realm of the identities created with --db")
	fs.BoolVar(&c.allowRemote, "allow-remote", false, "allow a server or database that is not on a loopback address")
	fs.BoolVar(&c.asJSON, "json", false, "print the results as JSON")
	fs.Uint64Var(&c.seed, "seed", 0, "the seed of the agents' choices (default: from the clock)")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	return c, c.check()
}

func (c *config) check() error {
	switch {
	case c.url == "" && c.baselineDB == "":
		return errors.New("nothing to measure: give --url, --baseline-db, or both")
	case c.url != "" && c.tokensFile == "" && c.db == "":
		return errors.New("--url needs the agents' tokens: --tokens FILE or --db URL")
	case c.tokensFile != "" && c.db != "":
		return errors.New("--tokens and --db both name where the tokens come from: give one")
	case c.agents < 1 || c.agents > maxAgents:
		return fmt.Errorf("--agents %d: between 1 and %d", c.agents, maxAgents)
	case c.identities < 0 || c.identities > maxAgents:
		return fmt.Errorf("--identities %d: between 1 and %d", c.identities, maxAgents)
	case c.duration < 0 || c.duration > maxDuration:
		return fmt.Errorf("--duration %v: at most %v", c.duration, maxDuration)
	case c.requests < 0 || c.requests > maxRequests:
		return fmt.Errorf("--requests %d: at most %d", c.requests, maxRequests)
	case c.rounds < 0 || c.rounds > 100:
		return fmt.Errorf("--rounds %d: at most 100", c.rounds)
	}
	if c.duration == 0 && c.requests == 0 {
		c.duration = 10 * time.Second
	}
	if c.duration == 0 {
		c.duration = maxDuration // --requests ends it; the duration only bounds it
	}
	if c.identities == 0 {
		c.identities = c.agents
	}
	if c.rounds == 0 {
		c.rounds = 1
		if c.url != "" && c.baselineDB != "" {
			c.rounds = 3
		}
	}
	if c.seed == 0 {
		c.seed = uint64(time.Now().UnixNano())
	}
	for _, addr := range []struct{ flag, url string }{{"--url", c.url}, {"--db", c.db}, {"--baseline-db", c.baselineDB}} {
		if addr.url == "" || c.allowRemote {
			continue
		}
		if err := checkLoopback(addr.url); err != nil {
			return fmt.Errorf("%s: %v (--allow-remote to load it anyway)", addr.flag, err)
		}
	}
	return nil
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	c, err := parseFlags(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintf(stderr, "parley-load: %v\n", err)
		return 2
	}
	modes, cleanup, err := setup(ctx, c)
	defer cleanup()
	if err != nil {
		fmt.Fprintf(stderr, "parley-load: %v\n", err)
		return 1
	}
	if !c.asJSON {
		fmt.Fprintf(stdout, "parley-load: %d agents, %d round(s) of %s per mode\n", c.agents, c.rounds, budget(c))
	}
	for r := 0; r < c.rounds; r++ {
		for _, m := range modes {
			phase(ctx, c, m, r)
			if ctx.Err() != nil {
				break
			}
		}
	}
	rep := report{Agents: c.agents, Rounds: c.rounds}
	for _, m := range modes {
		rep.Modes = append(rep.Modes, m.stats.summary(m.name))
	}
	if len(rep.Modes) == 2 && rep.Modes[1].Throughput > 0 {
		ratio := rep.Modes[0].Throughput / rep.Modes[1].Throughput
		rep.Ratio = &ratio
	}
	if c.asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		_ = enc.Encode(rep)
	} else {
		rep.print(stdout)
	}
	if ctx.Err() != nil {
		fmt.Fprintln(stderr, "parley-load: interrupted; the figures cover what ran")
		return 1
	}
	return 0
}

func budget(c *config) string {
	var parts []string
	if c.duration != maxDuration {
		parts = append(parts, (c.duration / time.Duration(c.rounds)).String())
	}
	if c.requests > 0 {
		parts = append(parts, fmt.Sprintf("%d requests", c.requests/c.rounds))
	}
	return strings.Join(parts, " or ")
}

// mode is one thing measured: the server over HTTP, or the baseline.
type mode struct {
	name   string
	sender sender
	board  *board
	stats  *stats
	seq    atomic.Uint64
}

// phase lets every agent send for one round's share of the budget.
func phase(ctx context.Context, c *config, m *mode, round int) {
	ctx, cancel := context.WithTimeout(ctx, c.duration/time.Duration(c.rounds))
	defer cancel()
	var left atomic.Int64
	left.Store(int64(c.requests / c.rounds))
	unlimited := c.requests == 0
	began := time.Now()
	var wg sync.WaitGroup
	for a := 0; a < c.agents; a++ {
		rng := rand.New(rand.NewPCG(c.seed, m.seq.Add(1)))
		wg.Go(func() {
			var lat []time.Duration
			refused := map[string]int{}
			accepted := 0
			for ctx.Err() == nil && (unlimited || left.Add(-1) >= 0) {
				st := m.board.next(a, rng)
				t0 := time.Now()
				out := m.sender.send(ctx, a, st)
				if out.reason == "cancelled" {
					break
				}
				lat = append(lat, time.Since(t0))
				if out.accepted {
					accepted++
					if st.kind == "ask" && out.id != 0 {
						m.board.asked(a, out.id, out.root)
					}
				}
				if out.reason != "" {
					refused[out.reason]++
				}
				if out.retry > 0 {
					sleep(ctx, out.retry)
				}
			}
			m.stats.add(lat, accepted, refused)
		})
	}
	wg.Wait()
	m.stats.addTime(time.Since(began))
	_ = round
}

func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}

// stats gathers one mode's requests across its phases.
type stats struct {
	mu       sync.Mutex
	lat      []time.Duration
	accepted int
	refused  map[string]int
	elapsed  time.Duration
}

func newStats() *stats { return &stats{refused: map[string]int{}} }

func (s *stats) add(lat []time.Duration, accepted int, refused map[string]int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.lat = append(s.lat, lat...)
	s.accepted += accepted
	for r, n := range refused {
		s.refused[r] += n
	}
}

func (s *stats) addTime(d time.Duration) {
	s.mu.Lock()
	s.elapsed += d
	s.mu.Unlock()
}

// summary is one mode's figures.
type summary struct {
	Mode       string         `json:"mode"`
	Requests   int            `json:"requests"`
	Accepted   int            `json:"accepted"`
	Refused    map[string]int `json:"refused"`
	Seconds    float64        `json:"seconds"`
	Throughput float64        `json:"requests_per_second"`
	P50        float64        `json:"p50_ms"`
	P90        float64        `json:"p90_ms"`
	P99        float64        `json:"p99_ms"`
	Max        float64        `json:"max_ms"`
}

func (s *stats) summary(name string) summary {
	s.mu.Lock()
	defer s.mu.Unlock()
	sort.Slice(s.lat, func(i, j int) bool { return s.lat[i] < s.lat[j] })
	sum := summary{Mode: name, Requests: len(s.lat), Accepted: s.accepted, Refused: s.refused, Seconds: s.elapsed.Seconds()}
	if s.elapsed > 0 {
		sum.Throughput = float64(len(s.lat)) / s.elapsed.Seconds()
	}
	if n := len(s.lat); n > 0 {
		q := func(p float64) float64 { return ms(s.lat[min(n-1, int(p*float64(n)))]) }
		sum.P50, sum.P90, sum.P99, sum.Max = q(0.50), q(0.90), q(0.99), ms(s.lat[n-1])
	}
	return sum
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// report is a run's result.
type report struct {
	Agents int       `json:"agents"`
	Rounds int       `json:"rounds"`
	Modes  []summary `json:"modes"`
	// Ratio is the server's throughput over the baseline's, when both ran.
	Ratio *float64 `json:"ratio,omitempty"`
}

func (r report) print(w io.Writer) {
	for _, m := range r.Modes {
		fmt.Fprintf(w, "%-9s %8d requests in %6.1fs  %8.1f req/s  accepted %d  latency ms p50 %.2f p90 %.2f p99 %.2f max %.2f\n",
			m.Mode, m.Requests, m.Seconds, m.Throughput, m.Accepted, m.P50, m.P90, m.P99, m.Max)
		if len(m.Refused) > 0 {
			var reasons []string
			for reason, n := range m.Refused {
				reasons = append(reasons, fmt.Sprintf("%s %d", reason, n))
			}
			sort.Strings(reasons)
			fmt.Fprintf(w, "%-9s refused: %s\n", "", strings.Join(reasons, ", "))
		}
	}
	if r.Ratio != nil {
		fmt.Fprintf(w, "ratio     %s / %s throughput = %.3f\n", r.Modes[0].Mode, r.Modes[1].Mode, *r.Ratio)
	}
}
