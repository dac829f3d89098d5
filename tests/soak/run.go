package soak

import (
	"context"
	crand "crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/parleyforum/parley/storage/storagetest/pgcluster"
)

// run is one soak run in progress.
type run struct {
	cfg     Config
	ledger  *ledger
	board   *board
	stats   *stats
	server  *server
	cluster *pgcluster.Cluster
	dbURL   string
	begin   time.Time

	mu       sync.Mutex
	problems []string
	faults   []FaultRecord
}

// FaultRecord is one fault the run caused, and how long until /healthz answered again.
type FaultRecord struct {
	At       time.Duration
	Fault    Fault
	Recovery time.Duration
}

func (r *run) problem(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.problems = append(r.problems, fmt.Sprintf(format, args...))
}

func (r *run) logf(format string, args ...any) {
	if r.cfg.Log != nil {
		fmt.Fprintf(r.cfg.Log, "soak %6.1fs  %s\n", time.Since(r.begin).Seconds(), fmt.Sprintf(format, args...))
	}
}

// Run soaks a server and checks what it kept. The error is for a run that could not be made
// (no Postgres, no binary); what the run found wrong is in the report's Problems.
func Run(ctx context.Context, cfg Config) (*Report, error) {
	if cfg.Faults == nil {
		cfg.Faults = DefaultFaults(cfg.Database)
	}
	if err := cfg.check(); err != nil {
		return nil, err
	}
	var tag [3]byte
	_, _ = crand.Read(tag[:])
	r := &run{cfg: cfg, ledger: newLedger(hex.EncodeToString(tag[:])), board: &board{}, stats: newStats(), begin: time.Now()}

	if err := r.openDatabase(ctx); err != nil {
		return nil, err
	}
	if r.cluster != nil {
		defer r.cluster.Stop()
	}
	identities := max(2, cfg.Agents/4)
	handles := []string{"soak-walkaway", "soak-feed"}
	for i := range identities {
		handles = append(handles, fmt.Sprintf("soak-%d", i))
	}
	tokens, err := r.tokens(ctx, handles)
	if err != nil {
		return nil, err
	}
	walkToken, feedToken, tokens := tokens[0], tokens[1], tokens[2:]
	mem := newMemory()
	if r.server, err = newServer(cfg.Parley, cfg.Dir, r.dbURL, mem); err != nil {
		return nil, err
	}
	if err := r.server.start(); err != nil {
		return nil, err
	}
	defer r.server.stop()
	r.logf("%s, %d agents (%d identities) over HTTP and MCP for %v; faults every %v: %v; a client walks away every %v",
		cfg.Database, cfg.Agents, identities, cfg.Duration, cfg.FaultEvery, cfg.Faults, cfg.AbandonEvery)

	client := newHTTPClient(cfg.Agents)
	base := r.server.base()
	transports := []transport{&httpTransport{client: client, base: base}, &mcpTransport{client: client, base: base}}
	agents := make([]*agent, cfg.Agents)
	for i := range agents {
		agents[i] = &agent{n: i, token: tokens[i%identities], ext: extension(i), tr: transports[i%2], r: r,
			rng: rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), uint64(i))), seen: map[int64]bool{}, mine: map[int64][]int64{}}
	}

	// Listeners first: the feed and every inbox start before the first write.
	follow, stopFollow := context.WithCancel(ctx)
	defer stopFollow()
	feed := newFollower(base, feedToken)
	if err := feed.open(follow); err != nil {
		return nil, err
	}
	for _, a := range agents {
		if err := a.startInbox(ctx); err != nil {
			return nil, fmt.Errorf("agent %d: first inbox read: %v", a.n, err)
		}
	}

	work, stopWork := context.WithTimeout(ctx, cfg.Duration)
	defer stopWork()
	drain, stopDrain := context.WithCancel(ctx)
	defer stopDrain()
	var background, working sync.WaitGroup
	background.Go(func() { r.injectFaults(work) })
	walk := &walkaway{r: r, addr: r.server.addr, token: walkToken}
	if cfg.AbandonEvery > 0 {
		background.Go(func() { walk.loop(work, cfg.AbandonEvery) })
	}
	background.Go(func() { r.progress(work) })
	for _, a := range agents {
		working.Go(func() { a.work(work, drain) })
	}
	<-work.Done()
	background.Wait()
	// The last writes may still be retrying: they get two minutes to be acknowledged.
	drainTimer := time.AfterFunc(2*time.Minute, stopDrain)
	working.Wait()
	drainTimer.Stop()
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	r.logf("load stopped; checking")
	// Requests cut off by the walkaway may still run their last statements.
	time.Sleep(2 * time.Second)

	report := &Report{Database: cfg.Database, Agents: cfg.Agents, Identities: identities, Duration: cfg.Duration}
	r.checkInboxes(ctx, agents, report)
	for _, tr := range transports {
		if err := walk.placesFreed(ctx, tr, 8); err != nil {
			r.problem("%s: %v", tr.name(), err)
		}
	}
	feedSeen := r.waitForFeed(feed)
	stopFollow()
	if err := r.server.stop(); err != nil {
		r.problem("%v", err)
	}

	writes := r.ledger.all()
	if report.Consistency, err = checkDatabase(ctx, r.dbURL, writes, r.problem); err != nil {
		return nil, err
	}
	_, report.FeedStreams, report.FeedResumes = feed.seen()
	r.checkFeed(feedSeen, writes, report)
	report.Memory = mem.report()
	report.Elapsed = time.Since(r.begin)
	report.Stats = r.stats
	r.mu.Lock()
	report.Faults = r.faults
	report.Problems = append(r.problems, r.server.faults...)
	r.mu.Unlock()
	for _, k := range walkawayKinds {
		report.Walkaways += r.stats.get("walkaway " + k)
	}
	return report, nil
}

// openDatabase makes the run's database: a durable Postgres cluster of its own (the run
// restarts it) or a SQLite file.
func (r *run) openDatabase(ctx context.Context) error {
	if r.cfg.Database == SQLite {
		r.dbURL = "sqlite:" + filepath.Join(r.cfg.Dir, "soak.db")
		return nil
	}
	// Durable, as a production server: a commit acknowledged before an immediate stop of
	// Postgres must survive it, or the check would report losses that are by design.
	c, err := pgcluster.StartWith(ctx, pgcluster.Options{Durable: true})
	if err != nil {
		return err
	}
	conn, err := pgx.Connect(ctx, c.URL("postgres"))
	if err == nil {
		_, err = conn.Exec(ctx, "CREATE DATABASE parley")
		_ = conn.Close(ctx)
	}
	if err != nil {
		_ = c.Stop()
		return fmt.Errorf("creating the database: %v", err)
	}
	r.cluster, r.dbURL = c, c.URL("parley")
	return nil
}

// tokens makes a token for each handle: the first alone, since it migrates the new
// database, the others at once.
func (r *run) tokens(ctx context.Context, handles []string) ([]string, error) {
	tokens := make([]string, len(handles))
	errs := make([]error, len(handles))
	tokens[0], errs[0] = r.token(ctx, handles[0])
	var wg sync.WaitGroup
	for i := 1; i < len(handles) && errs[0] == nil; i++ {
		wg.Go(func() { tokens[i], errs[i] = r.token(ctx, handles[i]) })
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return tokens, nil
}

// token runs parley token create, as an operator does.
func (r *run) token(ctx context.Context, handle string) (string, error) {
	cmd := exec.CommandContext(ctx, r.cfg.Parley, "token", "create", "--handle", handle, "--json", "--db", r.dbURL)
	cmd.Dir = r.cfg.Dir
	out, err := cmd.Output()
	if err != nil {
		msg := ""
		if ee, ok := err.(*exec.ExitError); ok {
			msg = string(ee.Stderr)
		}
		return "", fmt.Errorf("parley token create: %v %s", err, msg)
	}
	var res struct {
		Token string `json:"token"`
	}
	if err := json.Unmarshal(out, &res); err != nil || res.Token == "" {
		return "", fmt.Errorf("parley token create --json printed %q", out)
	}
	return res.Token, nil
}

// injectFaults causes the configured faults in turn, one at a time, each once the server
// answers again after the last.
func (r *run) injectFaults(ctx context.Context) {
	if len(r.cfg.Faults) == 0 {
		return
	}
	for i := 0; ; i++ {
		select {
		case <-ctx.Done():
			return
		case <-time.After(r.cfg.FaultEvery):
		}
		fault := r.cfg.Faults[i%len(r.cfg.Faults)]
		at := time.Since(r.begin)
		var err error
		switch fault {
		case RestartPostgresFast:
			err = r.cluster.Restart(context.Background(), pgcluster.RestartFast)
		case RestartPostgresImmediate:
			err = r.cluster.Restart(context.Background(), pgcluster.RestartImmediate)
		case KillServer:
			if err = r.server.kill(); err == nil {
				err = r.server.start()
			}
		}
		if err == nil {
			err = r.server.healthy(context.Background(), time.Minute)
		}
		if err != nil {
			r.problem("fault %s at %v: the server did not come back: %v", fault, at.Round(time.Second), err)
			return
		}
		rec := FaultRecord{At: at, Fault: fault, Recovery: time.Since(r.begin) - at}
		r.mu.Lock()
		r.faults = append(r.faults, rec)
		r.mu.Unlock()
		r.logf("%-12s back in %v", fault, rec.Recovery.Round(time.Millisecond))
	}
}

// progress prints a line a minute on long runs.
func (r *run) progress(ctx context.Context) {
	tick := time.NewTicker(time.Minute)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			acked := 0
			for _, w := range r.ledger.all() {
				if w.acked {
					acked++
				}
			}
			r.logf("%d writes acknowledged", acked)
		}
	}
}

// checkInboxes reads every agent's inbox on from its last cursor, then from the start: every
// thread that is the agent's turn now changed after its first read, so its reads by cursor
// over the run — across restarts and kills — must have listed it.
func (r *run) checkInboxes(ctx context.Context, agents []*agent, report *Report) {
	for _, a := range agents {
		a.failed = 0
		if err := a.catchUp(ctx); err != nil {
			r.problem("agent %d: inbox after the run: %v", a.n, err)
			continue
		}
		fresh := &agent{n: a.n, token: a.token, ext: a.ext, tr: a.tr, r: r, rng: a.rng, seen: map[int64]bool{}}
		if err := fresh.catchUp(ctx); err != nil {
			r.problem("agent %d: inbox from the start: %v", a.n, err)
			continue
		}
		report.InboxTurns += len(fresh.seen)
		for th := range fresh.seen {
			if !a.seen[th] {
				r.problem("agent %d: th_%d is its turn, but its reads by cursor never listed it", a.n, th)
			}
		}
	}
}

func (a *agent) catchUp(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	for {
		done, err := a.readInbox(ctx, 0)
		if err != nil && ctx.Err() != nil {
			return err
		}
		if done {
			return nil
		}
	}
}

// waitForFeed gives the follower until every acknowledged message has come, and then a
// little longer for the others.
func (r *run) waitForFeed(f *follower) map[int64]int {
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		seen, _, _ := f.seen()
		missing := false
		for _, w := range r.ledger.all() {
			if w.acked && seen[w.id] == 0 {
				missing = true
				break
			}
		}
		if !missing {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	time.Sleep(time.Second)
	seen, _, _ := f.seen()
	return seen
}

// checkFeed: every stored message came through the feed once, across every resume.
func (r *run) checkFeed(seen map[int64]int, writes []write, report *Report) {
	stored := map[int64]bool{}
	for _, id := range report.Consistency.ids {
		stored[id] = true
		switch n := seen[id]; {
		case n == 0:
			report.FeedMissed++
		case n > 1:
			r.problem("the feed delivered msg_%d %d times", id, n)
		}
	}
	for id := range seen {
		if !stored[id] {
			r.problem("the feed delivered msg_%d, which is not stored", id)
		}
	}
	for _, w := range writes {
		if w.acked && seen[w.id] == 0 {
			r.problem("%s: acknowledged as msg_%d, never came through the feed", w.marker, w.id)
		}
	}
	if report.FeedMissed > 0 {
		r.problem("%d stored messages never came through the feed", report.FeedMissed)
	}
}

// Report is what a run found.
type Report struct {
	Database    string
	Agents      int
	Identities  int
	Duration    time.Duration
	Elapsed     time.Duration
	Faults      []FaultRecord
	Walkaways   int
	Consistency Consistency
	InboxTurns  int // threads listed in the agents' inboxes at the end, each checked
	FeedStreams int
	FeedResumes map[string]int
	FeedMissed  int
	Memory      MemoryReport
	Stats       *stats
	Problems    []string
}

// OK: nothing lost, nothing twice, nothing inconsistent.
func (r *Report) OK() bool { return len(r.Problems) == 0 }

// Print writes the summary.
func (r *Report) Print(w io.Writer) {
	verdict := "PASSED"
	if !r.OK() {
		verdict = fmt.Sprintf("FAILED (%d problems)", len(r.Problems))
	}
	fmt.Fprintf(w, "parley-soak: %s, %s, %d agents (%d identities; half HTTP, half MCP), %v of load, %v in all\n",
		verdict, r.Database, r.Agents, r.Identities, r.Duration, r.Elapsed.Round(time.Second))
	byFault := map[Fault][]time.Duration{}
	for _, f := range r.Faults {
		byFault[f.Fault] = append(byFault[f.Fault], f.Recovery)
	}
	var parts []string
	for _, f := range []Fault{RestartPostgresFast, RestartPostgresImmediate, KillServer} {
		if d := byFault[f]; len(d) > 0 {
			worst := time.Duration(0)
			for _, x := range d {
				worst = max(worst, x)
			}
			parts = append(parts, fmt.Sprintf("%s ×%d (back within %v)", f, len(d), worst.Round(100*time.Millisecond)))
		}
	}
	if len(parts) == 0 {
		parts = []string{"none"}
	}
	fmt.Fprintf(w, "faults:    %s; clients walked away mid-request ×%d\n", strings.Join(parts, ", "), r.Walkaways)
	c := r.Consistency
	fmt.Fprintf(w, "writes:    %d acknowledged, all stored once as sent unless listed below; %d sent again under their idempotency key (%d answered as replays over HTTP); %d doubles; %d unacknowledged writes landed, %d never did\n",
		c.Acknowledged, c.Retried, r.Stats.get("replayed writes"), c.Doubles, c.LandedUnacknowledged, c.NeverLanded)
	fmt.Fprintf(w, "database:  %d threads, %d messages, %d state events: counts, last and root messages, awaiting, inbox positions, feed rows and counted writes checked\n",
		c.Threads, c.Messages, c.Events)
	fmt.Fprintf(w, "reads:     %d thread reads whose message_count differed from the tree they returned\n", r.Stats.get("torn thread reads"))
	fmt.Fprintf(w, "inbox:     %d turns at the end, each listed by its agent's reads by cursor over the run\n", r.InboxTurns)
	fmt.Fprintf(w, "feed:      %d streams (resumed with Last-Event-ID), resumes sent by the server %v; every stored message delivered once: %v\n",
		r.FeedStreams, r.FeedResumes, r.FeedMissed == 0)
	m := r.Memory
	fmt.Fprintf(w, "memory:    %d server processes; RSS first %.1f MB, max %.1f MB, last %.1f MB; longest-lived %v: %.1f MB after warm-up → %.1f MB at its end, slope %+.2f MB/min over %d samples\n",
		m.Processes, m.StartMB, m.MaxMB, m.EndMB, m.LongestLived, m.WarmedMB, m.FinalMB, m.SlopeMBPerMin, m.Samples)
	fmt.Fprintln(w, "calls:")
	r.Stats.print(w, "http", "mcp")
	for i, p := range r.Problems {
		if i == 50 {
			fmt.Fprintf(w, "  … and %d more\n", len(r.Problems)-50)
			break
		}
		fmt.Fprintf(w, "PROBLEM: %s\n", p)
	}
}
