package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/parleyforum/parley/storage"
	"github.com/parleyforum/parley/storage/storagetest"
)

// runJSON runs the tool with args and --json and reads its report; the run must succeed.
func runJSON(t *testing.T, args ...string) report {
	t.Helper()
	var out, errs bytes.Buffer
	if code := run(context.Background(), append(args, "--json"), &out, &errs); code != 0 {
		t.Fatalf("exit %d: %s", code, errs.String())
	}
	var rep report
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatalf("%v in %s", err, out.String())
	}
	return rep
}

func ratioOf(rep report, name string) float64 {
	for _, r := range rep.Ratios {
		if r.Name == name {
			return r.Value
		}
	}
	return 0
}

// A mixed run over HTTP and MCP, in turns with the direct baseline: every operation of the
// mix answered and measured in both transports, nothing refused, the ratios and the
// server's memory reported.
func TestRunMixed(t *testing.T) {
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		url := startServer(t, db)
		rep := runJSON(t, "--url", url, "--db", db.URL(), "--baseline-db", storagetest.NewURL(t, db.Kind()),
			"--modes", "http,mcp,direct", "--mix", "mixed", "--agents", "4", "--requests", "200", "--rounds", "2",
			"--memory-every", "50ms")
		if len(rep.Modes) != 3 {
			t.Fatalf("modes: %+v", rep.Modes)
		}
		for _, m := range rep.Modes {
			if m.Mode == modeDirect {
				// The baseline writes; the reads of the mix are not its to measure.
				if m.Accepted != 200 || len(m.Refused) != 0 || len(m.Operations) != 1 || m.Operations[0].Op != opSend {
					t.Errorf("direct: %+v", m)
				}
				continue
			}
			if m.Requests != 200 || m.Accepted != 200 || len(m.Refused) != 0 || m.SendsPerSecond <= 0 || len(m.Rounds) != 2 {
				t.Errorf("%s: %+v", m.Mode, m)
			}
			ops := map[string]opSummary{}
			for _, o := range m.Operations {
				ops[o.Op] = o
			}
			for _, op := range operations {
				if o := ops[op]; o.Requests == 0 || o.P50 <= 0 || o.P99 < o.P50 || o.Tail < 1 {
					t.Errorf("%s %s: %+v", m.Mode, op, o)
				}
			}
		}
		if ratioOf(rep, "mcp / http") <= 0 || ratioOf(rep, "http / direct") <= 0 {
			t.Errorf("ratios: %+v", rep.Ratios)
		}
		if rep.Memory == nil || rep.Memory.Samples == 0 || rep.Memory.MaxMB <= 0 {
			t.Errorf("memory: %+v", rep.Memory)
		}
	})
}

// The mode scoped in turns with http: its agents' tokens are scoped to a room of the run's
// own and their questions open threads there; every operation of the mix is answered and
// nothing refused (a thread outside their room would be not_found), and the ratio of the
// two is reported.
func TestRunScoped(t *testing.T) {
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		url := startServer(t, db)
		rep := runJSON(t, "--url", url, "--db", db.URL(), "--modes", "http,scoped", "--mix", "mixed",
			"--agents", "4", "--requests", "200", "--rounds", "2", "--memory-every", "0")
		if len(rep.Modes) != 2 {
			t.Fatalf("modes: %+v", rep.Modes)
		}
		for _, m := range rep.Modes {
			if m.Requests != 200 || m.Accepted != 200 || len(m.Refused) != 0 {
				t.Errorf("%s: %+v", m.Mode, m)
			}
		}
		if ratioOf(rep, "scoped / http") <= 0 {
			t.Errorf("ratios: %+v", rep.Ratios)
		}
		ctx := context.Background()
		var scopedTokens, inRoom, elsewhere int
		err := errors.Join(
			db.NewRaw("SELECT COUNT(*) FROM tokens WHERE rooms <> ''").Scan(ctx, &scopedTokens),
			db.NewRaw("SELECT COUNT(*) FROM threads AS t JOIN rooms AS r ON r.id = t.room_id WHERE r.name LIKE 'load-%' AND t.creator LIKE '%scoped%'").Scan(ctx, &inRoom),
			db.NewRaw("SELECT COUNT(*) FROM threads AS t JOIN rooms AS r ON r.id = t.room_id WHERE r.name NOT LIKE 'load-%' AND t.creator LIKE '%scoped%'").Scan(ctx, &elsewhere))
		if err != nil || scopedTokens != 4 || inRoom == 0 || elsewhere != 0 {
			t.Errorf("%d scoped tokens, the scoped agents' threads %d in their room and %d elsewhere (%v)", scopedTokens, inRoom, elsewhere, err)
		}
	})
}

// The pgbench modes in turns with the server: pgbench's sends counted from its log, the
// minimal post's rows in their own tables, the headline ratios, and the CPU each mode's
// processes spent.
func TestRunPgbench(t *testing.T) {
	db := storagetest.Open(t, storage.Postgres)
	url := startServer(t, db)
	baseline := storagetest.NewURL(t, storage.Postgres)
	rep := runJSON(t, "--url", url, "--db", db.URL(), "--baseline-db", baseline, "--modes", "http,pgbench,minimal",
		"--agents", "4", "--requests", "176", "--rounds", "2")
	if len(rep.Modes) != 3 || rep.Modes[0].Mode != modeHTTP || rep.Modes[1].Mode != modePgbench || rep.Modes[2].Mode != modeMinimal {
		t.Fatalf("modes: %+v", rep.Modes)
	}
	// 176 sends in 2 rounds of 4 clients: 22 each, two cycles of the conversation.
	for _, b := range rep.Modes[1:] {
		if b.Requests != 176 || b.Accepted != 176 || b.SendsPerSecond <= 0 || b.P50 <= 0 {
			t.Errorf("%s: %+v", b.Mode, b)
		}
		// Postgres is on this machine: its processes' CPU is read; pgbench's is the client's.
		if b.DatabaseCPU == nil || *b.DatabaseCPU <= 0 || b.ClientCPU == nil || b.ServerCPU != nil {
			t.Errorf("%s: CPU per request not measured: %+v", b.Mode, b)
		}
	}
	if h := rep.Modes[0]; h.ServerCPU == nil || *h.ServerCPU <= 0 || h.DatabaseCPU == nil || *h.DatabaseCPU <= 0 {
		t.Errorf("http: CPU per request not measured: %+v", h)
	}
	for _, name := range []string{"http / pgbench", "http / minimal", "pgbench / minimal"} {
		if ratioOf(rep, name) <= 0 {
			t.Errorf("no %s in %+v", name, rep.Ratios)
		}
	}
	var posts, events, count int
	conn, err := storage.Open(context.Background(), baseline)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	err = conn.NewRaw("SELECT (SELECT count(*) FROM minimal.messages), (SELECT count(*) FROM minimal.events), (SELECT sum(message_count) FROM minimal.threads)").
		Scan(context.Background(), &posts, &events, &count)
	if err != nil || posts != 176 || events != 176 || count != 176 {
		t.Errorf("the minimal posts: %d messages, %d events, counted %d (%v); want 176 each", posts, events, count, err)
	}
	check, err := storage.Open(context.Background(), baseline)
	if err != nil {
		t.Fatal(err)
	}
	defer check.Close()
	var threads, closed int
	err = check.NewRaw("SELECT count(*), count(*) FILTER (WHERE state = 'closed') FROM threads").Scan(context.Background(), &threads, &closed)
	if err != nil || threads != 16 || closed != 16 {
		t.Errorf("pgbench's database holds %d threads, %d closed (%v); want 16, all closed", threads, closed, err)
	}
}

// --launch serves a parley binary from its own database and removes it after: here the
// SQLite variant, on the binary built from this tree.
func TestLaunchSQLite(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "parley")
	build := exec.Command("go", "build", "-o", bin, "github.com/parleyforum/parley/cmd/parley")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	before, _ := filepath.Glob(filepath.Join(os.TempDir(), "parley-load-*"))
	rep := runJSON(t, "--launch", bin, "--launch-db", "sqlite", "--launch-on-disk", "--agents", "2", "--requests", "60")
	if len(rep.Modes) != 3 {
		t.Fatalf("modes: %+v", rep.Modes)
	}
	for _, m := range rep.Modes {
		if m.Accepted != 60 || len(m.Refused) != 0 {
			t.Errorf("%s: %+v", m.Mode, m)
		}
	}
	after, _ := filepath.Glob(filepath.Join(os.TempDir(), "parley-load-*"))
	if len(after) > len(before) {
		t.Errorf("the launch left its folder behind: %v", after)
	}
}

func TestParseMix(t *testing.T) {
	for _, c := range []struct {
		spec, want string
	}{
		{"send", "send=1"},
		{"mixed", mixedPreset},
		{"send=3, inbox=1", "send=3,inbox=1"},
		{"send=0,search=2", "search=2"},
		{"send,send", ""},
		{"write", ""},
		{"send=-1", ""},
		{"send=x", ""},
		{"send=0", ""},
	} {
		m, err := parseMix(c.spec)
		switch {
		case c.want == "" && err == nil:
			t.Errorf("parseMix(%q) = %v, want an error", c.spec, m)
		case c.want != "" && (err != nil || m.String() != c.want):
			t.Errorf("parseMix(%q) = %v, %v; want %s", c.spec, m, err, c.want)
		}
	}
}

func TestMetricValue(t *testing.T) {
	text := "# HELP process_resident_memory_bytes Resident memory size in bytes.\n" +
		"# TYPE process_resident_memory_bytes gauge\nprocess_resident_memory_bytes_total 1\n" +
		"process_resident_memory_bytes 1.234e+08\n"
	if v, err := metricValue(strings.NewReader(text), "process_resident_memory_bytes"); err != nil || v != 1.234e8 {
		t.Errorf("metricValue = %v, %v", v, err)
	}
	if _, err := metricValue(strings.NewReader("go_goroutines 7\n"), "process_resident_memory_bytes"); err == nil {
		t.Error("metricValue found what is not there")
	}
}

// The memory report's minutes are the medians of each minute's readings.
func TestMemoryMinutes(t *testing.T) {
	s := &memorySampler{cancel: func() {}, done: make(chan struct{})}
	close(s.done)
	for i, mb := range []float64{100, 120, 110, 130, 140, 135, 150} {
		s.samples = append(s.samples, memorySample{at: time.Duration(i) * 25 * time.Second, bytes: mb * 1e6})
	}
	r := s.stop()
	// Readings at 0, 25, 50 s; 75, 100 s; 125, 150 s.
	if want := []float64{110, 140, 150}; !slices.Equal(r.Minutes, want) || r.MaxMB != 150 || r.FirstMB != 100 || r.LastMB != 150 {
		t.Errorf("memory report %+v, want minutes %v", r, want)
	}
}
