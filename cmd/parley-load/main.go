// Command parley-load puts a Parley server under the load of agents holding conversations,
// and measures what it bears: sends per second, latency percentiles per operation, refusals
// by reason and the server's resident memory. It measures modes in turns (rounds), and prints
// the ratios of their throughputs:
//
//   - http: the agents over the HTTP binding (POST /v1/messages, GET /v1/inbox, …);
//
//   - mcp: the same agents over MCP (tools/call on /mcp);
//
//   - scoped: the agents over HTTP as in http, each token scoped to a room of the run's own
//     (PROTOCOL.md § 16) that their questions open threads in, so that every send and every
//     read checks the room;
//
//   - pgbench: the rows of the same sends written by pgbench -M prepared from a script
//     (pgbench_script.go), the database's own limit;
//
//   - minimal: the minimal forum post by pgbench (insert the message, update the thread,
//     insert the event; minimal.go), the floor below the send's own rows;
//
//   - direct: the same writes issued straight through the Go database driver (benchdata).
//
//     parley-load --url http://127.0.0.1:8080 --db postgres://…/parley --agents 16 --duration 10s
//     parley-load --url http://127.0.0.1:8080 --db postgres://…/parley --modes http,mcp,pgbench \
//     --baseline-db postgres://…/parley_baseline
//     parley-load --launch bin/parley --agents 16 --duration 30s    # what make load runs
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
	"slices"
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

// The modes, in the order they take their turns.
const (
	modeHTTP    = "http"
	modeMCP     = "mcp"
	modePgbench = "pgbench"
	modeDirect  = "direct"
	modeMinimal = "minimal"
	modeScoped  = "scoped"
)

var allModes = []string{modeHTTP, modeMCP, modePgbench, modeMinimal, modeDirect, modeScoped}

// serverModes are the modes whose agents speak to the server, with tokens of their own.
var serverModes = []string{modeHTTP, modeMCP, modeScoped}

// servedBy reports whether the mode's agents speak to the server.
func servedBy(mode string) bool { return slices.Contains(serverModes, mode) }

// ratioPairs are the ratios a run prints when both of a pair ran: the headline
// figures first.
var ratioPairs = [][2]string{{modeHTTP, modePgbench}, {modeHTTP, modeMinimal}, {modeMCP, modeHTTP}, {modePgbench, modeMinimal},
	{modeHTTP, modeDirect}, {modeMCP, modePgbench}, {modeMCP, modeMinimal}, {modeScoped, modeHTTP}}

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
	modes       []string
	agents      int
	identities  int
	duration    time.Duration
	requests    int
	rounds      int
	realm       string
	allowRemote bool
	asJSON      bool
	keys        bool // idempotency keys on every write, and retries under them
	seed        uint64
	mix         *mix
	memoryEvery time.Duration
	launch      string // a parley binary to serve from a throwaway database (launch.go)
	launchDB    string // postgres or sqlite
	onDisk      bool   // the launched database on disk, not in /dev/shm
	metrics     string // the base URL of the server's /metrics and /debug/pprof/ (default --url)
	profileDir  string // a folder for the server's CPU profile of each round of a server mode
}

func parseFlags(args []string, stderr io.Writer) (*config, error) {
	c := &config{}
	var modes, baseline, mixSpec string
	fs := flag.NewFlagSet("parley-load", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&c.url, "url", "", "the server, `http://127.0.0.1:PORT`")
	fs.StringVar(&c.tokensFile, "tokens", "", "a `FILE` of agent tokens, one a line (the secret, or the JSON of parley token create --json)")
	fs.StringVar(&c.db, "db", "", "the server's database `URL`, to create the agents' tokens in (instead of --tokens)")
	fs.StringVar(&c.baselineDB, "baseline-db", "", "a database `URL` (its own, not the server's) for the baselines, migrated by the tool")
	fs.StringVar(&modes, "modes", "", "what to measure, in turns: `LIST` of http, mcp, pgbench, minimal, direct (default: http with --url, and direct with --baseline-db)")
	fs.StringVar(&baseline, "baseline", "", "add a baseline to the modes: pgbench or direct")
	fs.StringVar(&mixSpec, "mix", "send", "what the agents do: send, mixed ("+mixedPreset+"), or `WEIGHTS` such as send=60,inbox=40")
	fs.IntVar(&c.agents, "agents", 16, "agents sending at once")
	fs.IntVar(&c.identities, "identities", 0, "identities to create with --db (default: one per agent)")
	fs.DurationVar(&c.duration, "duration", 0, "how long each measured mode runs, all rounds together (default 10s unless --requests)")
	fs.IntVar(&c.requests, "requests", 0, "how many requests each measured mode begins at most, all rounds together (a write whose answer did not come is sent again under its key past it)")
	fs.IntVar(&c.rounds, "rounds", 0, "turns the modes take (default 3 with more than one mode, else 1)")
	fs.StringVar(&c.realm, "realm", "ainotes", "the realm of the identities created with --db")
	fs.BoolVar(&c.allowRemote, "allow-remote", false, "allow a server or database that is not on a loopback address")
	fs.BoolVar(&c.asJSON, "json", false, "print the results as JSON")
	fs.BoolVar(&c.keys, "keys", true, "send every write with an idempotency key, and a write whose answer did not come again under it")
	fs.Uint64Var(&c.seed, "seed", 0, "the seed of the agents' choices (default: from the clock)")
	fs.DurationVar(&c.memoryEvery, "memory-every", time.Second, "how often to read the server's resident memory from its /metrics (0: never)")
	fs.StringVar(&c.launch, "launch", "", "a parley `BINARY` to serve from a throwaway database for the run; then --url, --db and --baseline-db are the tool's own")
	fs.StringVar(&c.launchDB, "launch-db", "postgres", "with --launch: postgres (a durable throwaway cluster) or sqlite")
	fs.StringVar(&c.metrics, "metrics", "", "the `URL` where the server serves /metrics and /debug/pprof/ (its --metrics-addr; default --url, or the launched server's metrics address)")
	fs.StringVar(&c.profileDir, "server-profile", "", "a `FOLDER` to keep the server's CPU profile of each round of http, mcp and scoped in (from /debug/pprof/profile of --metrics)")
	fs.BoolVar(&c.onDisk, "launch-on-disk", false, "with --launch: the database in the temporary folder, on disk, instead of /dev/shm; every commit then waits for the device")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	var err error
	if c.mix, err = parseMix(mixSpec); err != nil {
		return nil, err
	}
	if c.modes, err = c.chooseModes(modes, baseline); err != nil {
		return nil, err
	}
	return c, c.check()
}

// chooseModes reads --modes and --baseline, or chooses the modes from the addresses given.
func (c *config) chooseModes(list, baseline string) ([]string, error) {
	var modes []string
	if list != "" {
		for _, m := range strings.Split(list, ",") {
			modes = append(modes, strings.TrimSpace(m))
		}
	} else {
		switch {
		case c.launch != "" && c.launchDB == "sqlite":
			modes = []string{modeHTTP, modeMCP, modeDirect}
		case c.launch != "":
			modes = []string{modeHTTP, modeMCP, modePgbench}
		default:
			if c.url != "" {
				modes = append(modes, modeHTTP)
			}
			if c.baselineDB != "" && baseline == "" {
				modes = append(modes, modeDirect)
			}
		}
	}
	switch baseline {
	case "":
	case modePgbench, modeDirect:
		modes = append(modes, baseline)
	default:
		return nil, fmt.Errorf("--baseline %q: pgbench or direct", baseline)
	}
	var out []string
	for _, m := range modes {
		if !slices.Contains(allModes, m) {
			return nil, fmt.Errorf("--modes: %q is none of %s", m, strings.Join(allModes, ", "))
		}
		if !slices.Contains(out, m) {
			out = append(out, m)
		}
	}
	return out, nil
}

func (c *config) check() error {
	switch {
	case c.launch != "" && (c.url != "" || c.db != "" || c.baselineDB != "" || c.tokensFile != ""):
		return errors.New("--launch serves its own database: give no --url, --db, --baseline-db or --tokens with it")
	case c.launch == "" && c.onDisk:
		return errors.New("--launch-on-disk is a choice of --launch")
	case c.launch != "" && c.launchDB != "postgres" && c.launchDB != "sqlite":
		return fmt.Errorf("--launch-db %q: postgres or sqlite", c.launchDB)
	case len(c.modes) == 0:
		return errors.New("nothing to measure: give --url, --baseline-db, or both")
	case c.launch == "" && c.needs(serverModes...) && c.url == "":
		return errors.New("the modes http, mcp and scoped need the server: --url")
	case c.needs(modeScoped) && c.tokensFile != "":
		return errors.New("the mode scoped makes its own scoped tokens: --db or --launch, not --tokens")
	case c.launch == "" && c.url != "" && c.tokensFile == "" && c.db == "":
		return errors.New("--url needs the agents' tokens: --tokens FILE or --db URL")
	case c.tokensFile != "" && c.db != "":
		return errors.New("--tokens and --db both name where the tokens come from: give one")
	case c.launch == "" && c.needs(modePgbench, modeMinimal, modeDirect) && c.baselineDB == "":
		return errors.New("the modes pgbench, minimal and direct need a database of their own: --baseline-db")
	case c.needs(modePgbench, modeMinimal) && (c.launchDB == "sqlite" || (c.launch == "" && !isPostgres(c.baselineDB))):
		return errors.New("the modes pgbench and minimal need Postgres")
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
	case c.memoryEvery < 0:
		return fmt.Errorf("--memory-every %v: not negative", c.memoryEvery)
	case c.profileDir != "" && c.launch == "" && c.metrics == "":
		return errors.New("--server-profile reads the profile from the server's metrics address: name it with --metrics (the server's --metrics-addr), or --launch")
	case c.profileDir != "" && c.requests > 0 && c.duration == 0:
		return errors.New("--server-profile profiles for a round's duration: give --duration")
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
		if len(c.modes) > 1 {
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

// needs reports whether any of modes is measured.
func (c *config) needs(modes ...string) bool {
	for _, m := range modes {
		if slices.Contains(c.modes, m) {
			return true
		}
	}
	return false
}

func isPostgres(url string) bool {
	return strings.HasPrefix(url, "postgres://") || strings.HasPrefix(url, "postgresql://")
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
	modes, cleanup, err := setup(ctx, c, stderr)
	defer cleanup()
	if err != nil {
		fmt.Fprintf(stderr, "parley-load: %v\n", err)
		return 1
	}
	if !c.asJSON {
		fmt.Fprintf(stdout, "parley-load: %d agents, modes %s, %d round(s) of %s per mode, mix %s, %s\n",
			c.agents, strings.Join(c.modes, ","), c.rounds, budget(c), c.mix, time.Now().UTC().Format("2006-01-02 15:04 UTC"))
	}
	if c.metrics == "" {
		c.metrics = c.url
	}
	var mem *memorySampler
	if c.metrics != "" && c.memoryEvery > 0 && c.needs(serverModes...) {
		mem = startMemorySampler(ctx, c.metrics, c.memoryEvery)
	}
	prof, err := newProfiler(c)
	if err != nil {
		fmt.Fprintf(stderr, "parley-load: %v\n", err)
		return 1
	}
	mtr := newMeter(ctx, c)
	defer mtr.close()
	var runErr error
	for r := 0; r < c.rounds && runErr == nil && ctx.Err() == nil; r++ {
		for _, m := range modes {
			before := mtr.read(ctx)
			profiled := prof.start(ctx, m.name, r)
			runErr = phase(ctx, c, m)
			m.usage.add(before, mtr.read(ctx), m.database(c))
			if err := profiled(); err != nil && runErr == nil {
				runErr = err
			}
			if runErr != nil || ctx.Err() != nil {
				break
			}
		}
	}
	rep := report{Agents: c.agents, Rounds: c.rounds, Mix: c.mix.String()}
	for _, m := range modes {
		sum := m.stats.summary(m.name)
		sum.cost(m.name, &m.usage)
		rep.Modes = append(rep.Modes, sum)
	}
	rep.ratios()
	if mem != nil {
		rep.Memory = mem.stop()
	}
	if c.asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		_ = enc.Encode(rep)
	} else {
		rep.print(stdout, c.mix.sendsOnly())
		prof.print(stdout)
	}
	if runErr != nil {
		fmt.Fprintf(stderr, "parley-load: %v\n", runErr)
		return 1
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

// mode is one thing measured: the server over HTTP or MCP, or a baseline.
type mode struct {
	name   string
	sender sender   // nil for pgbench
	bench  *pgbench // the pgbench mode's
	// writesOnly: a baseline, which sends whatever the mix (it has no reads to measure).
	writesOnly bool
	board      *board
	stats      *stats
	usage      usage // what the processes spent in its rounds (meter.go)
	seq        atomic.Uint64
}

// database is the name of the Postgres database the mode writes to ("" on SQLite).
func (m *mode) database(c *config) string {
	if servedBy(m.name) {
		return databaseName(c.db)
	}
	return databaseName(c.baselineDB)
}

// phase lets every agent work for one round's share of the budget.
func phase(ctx context.Context, c *config, m *mode) error {
	if m.bench != nil {
		return benchPhase(ctx, c, m)
	}
	ctx, cancel := context.WithTimeout(ctx, c.duration/time.Duration(c.rounds))
	defer cancel()
	var left atomic.Int64
	left.Store(int64(c.requests / c.rounds))
	unlimited := c.requests == 0
	began := time.Now()
	var wg sync.WaitGroup
	var sends atomic.Int64
	for a := 0; a < c.agents; a++ {
		rng := rand.New(rand.NewPCG(c.seed, m.seq.Add(1)))
		wg.Go(func() {
			lat := map[string][]time.Duration{}
			refused := map[string]int{}
			accepted := 0
			var retry *step // a write whose answer did not come, sent again under its key
			// A write whose answer did not come is sent again even when the budget is spent:
			// the budget counts what the agents begin, and a write begun ends under its key.
			for ctx.Err() == nil && (retry != nil || unlimited || left.Add(-1) >= 0) {
				var st step
				switch op := c.mix.pick(rng); {
				case retry != nil:
					st, retry = *retry, nil
				case op == opSend || m.writesOnly:
					st = m.board.next(a, rng)
				default:
					st = m.board.read(a, op, rng)
				}
				t0 := time.Now()
				out := m.sender.do(ctx, a, st)
				if out.reason == "cancelled" {
					break
				}
				op := opOf(st)
				lat[op] = append(lat[op], time.Since(t0))
				if out.accepted {
					accepted++
					if op == opSend {
						sends.Add(1)
					}
					switch {
					case st.kind == "ask" && out.id != 0:
						m.board.asked(a, out.id, out.root)
					case st.kind == opInbox:
						m.board.polled(a, out.cursor)
					}
				}
				if out.reason != "" {
					refused[out.reason]++
				}
				if st.key != "" && out.retryable() {
					retry = &st
				}
				if out.retry > 0 {
					sleep(ctx, out.retry)
				}
			}
			m.stats.add(lat, accepted, refused)
		})
	}
	wg.Wait()
	m.stats.addRound(int(sends.Load()), time.Since(began))
	return nil
}

// benchPhase runs pgbench for one round's share of the budget.
func benchPhase(ctx context.Context, c *config, m *mode) error {
	seconds, perClient := 0, 0
	if c.duration != maxDuration {
		seconds = max(1, int((c.duration/time.Duration(c.rounds)+time.Second/2)/time.Second))
	}
	if c.requests > 0 {
		seconds, perClient = 0, max(1, c.requests/c.rounds/c.agents)
	}
	res, err := m.bench.run(ctx, c.agents, seconds, perClient)
	if err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return err
	}
	m.stats.add(map[string][]time.Duration{opSend: res.lat}, res.sends, nil)
	m.stats.addRound(res.sends, res.elapsed)
	return nil
}

func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}
