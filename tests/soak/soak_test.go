package soak

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/parleyforum/parley/storage"
	"github.com/parleyforum/parley/tests/parleybin"
)

// parleyBinary is the parley command, built once for the tests of this package (with the race
// detector when the tests have it).
var parleyBinary string

func TestMain(m *testing.M) {
	bin, err := parleybin.Build("")
	if err != nil {
		fmt.Fprintf(os.Stderr, "building parley: %v\n", err)
		os.Exit(2)
	}
	parleyBinary = bin
	os.Exit(m.Run())
}

// TestShortSoak is the soak in brief, so that it cannot rot: every fault at least once, every
// way of walking away, then the whole check. `make soak` runs it for minutes.
func TestShortSoak(t *testing.T) {
	for _, tc := range []struct {
		database   string
		duration   time.Duration
		faultEvery time.Duration
		want       []Fault
	}{
		// Each fault once, the slowest to recover last: on a loaded machine a server built
		// with the race detector takes up to 10 s to start again.
		{Postgres, 16 * time.Second, 2 * time.Second, []Fault{RestartPostgresImmediate, RestartPostgresFast, KillServer}},
		{SQLite, 12 * time.Second, 4 * time.Second, []Fault{KillServer}},
	} {
		t.Run(tc.database, func(t *testing.T) {
			t.Parallel()
			var log bytes.Buffer
			report, err := Run(context.Background(), Config{Parley: parleyBinary, Database: tc.database,
				Duration: tc.duration, Agents: 6, Faults: tc.want, FaultEvery: tc.faultEvery, AbandonEvery: 400 * time.Millisecond,
				Dir: t.TempDir(), Log: &log})
			if err != nil {
				t.Fatalf("%v\n%s", err, log.String())
			}
			var summary bytes.Buffer
			report.Print(&summary)
			t.Logf("\n%s%s", log.String(), summary.String())
			if !report.OK() {
				t.Errorf("the soak found %d problems", len(report.Problems))
			}
			caused := map[Fault]bool{}
			for _, f := range report.Faults {
				caused[f.Fault] = true
			}
			for _, f := range tc.want {
				if !caused[f] {
					t.Errorf("fault %s never happened", f)
				}
			}
			for _, k := range walkawayKinds {
				if report.Stats.get("walkaway "+k) == 0 {
					t.Errorf("no client walked away as %q", k)
				}
			}
			// Under the race detector, beside the other subtest, a server on SQLite may
			// acknowledge only a few writes a second: enough that some are in flight at a kill.
			if report.Consistency.Acknowledged < 10 {
				t.Errorf("only %d writes acknowledged: the load did not get going", report.Consistency.Acknowledged)
			}
			if report.Memory.Processes < 2 || report.Memory.MaxMB == 0 {
				t.Errorf("memory of %d processes, at most %.1f MB: not sampled", report.Memory.Processes, report.Memory.MaxMB)
			}
		})
	}
}

// TestCheckFindsWhatWentWrong spoils a database that passes the check in one way at a time:
// the check must name each.
func TestCheckFindsWhatWentWrong(t *testing.T) {
	const duplicate = `INSERT INTO messages (thread_id, parent_id, depth, ask_id, kind, identity, extension, author_kind, body,
			created_at, awaiting_mode, awaiting_identity, awaiting_extension) SELECT thread_id, parent_id, depth, ask_id, kind,
			identity, extension, author_kind, body, created_at, awaiting_mode, awaiting_identity, awaiting_extension
			FROM messages WHERE id = {acked}`
	spoils := []struct {
		name, sql, want string
		attempts        int // the attempts the ledger says the spoilt write took (0: as it did)
	}{
		{"nothing", "", "", 0},
		{"a lost message", "DELETE FROM feed WHERE message_id = {acked}; DELETE FROM messages WHERE id = {acked}", "and lost", 0},
		{"a changed body", "UPDATE messages SET body = body || '!' WHERE id = {acked}", "acknowledged as msg_", 0},
		{"a duplicate", duplicate, "a double landing", 0},
		// A write sent three times under its key and stored twice: before idempotency keys
		// this was counted as a retried copy; now it is a double landing.
		{"a retried write stored twice", duplicate, "a double landing", 3},
		{"a wrong count", "UPDATE threads SET message_count = message_count + 1", "messages stored", 0},
		{"a state its events do not reach", "UPDATE threads SET state = 'closed'", "replay to", 0},
		{"a turn in the wrong inbox", "UPDATE threads SET inbox_to = 'ainotes:nobody'", "inbox_to", 0},
		{"two threads at one inbox position", "UPDATE threads SET inbox_tx = 0, inbox_seq = 1", "share the inbox position", 0},
		{"a counted write not stored", "INSERT INTO write_times (identity, at) VALUES ('ainotes:soak-0', '2001-01-01 00:00:00')", "is counted", 0},
	}
	forum, writes := smallForum(t)
	for _, sp := range spoils {
		t.Run(strings.ReplaceAll(sp.name, " ", "_"), func(t *testing.T) {
			dbURL := copyForum(t, forum)
			ledger := append([]write(nil), writes...)
			if sp.sql != "" {
				newest := int64(0) // a message no other names as its parent
				for _, w := range writes {
					newest = max(newest, w.id)
				}
				for i := range ledger {
					if ledger[i].id == newest && sp.attempts > 0 {
						ledger[i].attempts = sp.attempts
					}
				}
				for _, stmt := range strings.Split(sp.sql, "; ") {
					spoil(t, dbURL, strings.ReplaceAll(stmt, "{acked}", fmt.Sprint(newest)))
				}
			}
			var problems []string
			_, err := checkDatabase(context.Background(), dbURL, ledger, func(format string, args ...any) {
				problems = append(problems, fmt.Sprintf(format, args...))
			})
			if err != nil {
				t.Fatal(err)
			}
			if sp.want == "" {
				if len(problems) > 0 {
					t.Fatalf("problems in an unspoilt database: %v", problems)
				}
				return
			}
			for _, p := range problems {
				if strings.Contains(p, sp.want) {
					return
				}
			}
			t.Errorf("%s: no problem says %q; found %v", sp.name, sp.want, problems)
		})
	}
}

// lossy is a transport that loses the answer of every write's first attempt, after the
// server wrote it: the agent must send it again, under its key, and it must land once.
type lossy struct {
	transport
	lost map[string]bool
}

func (l *lossy) call(ctx context.Context, token, op string, args map[string]any) answer {
	ans := l.transport.call(ctx, token, op, args)
	if key, _ := args[keyArgument].(string); key != "" && !l.lost[key] {
		l.lost[key] = true
		return answer{failed: fmt.Errorf("the answer to %s was lost", key)}
	}
	return ans
}

// smallForum is a SQLite database with two threads written through a real server, and the
// ledger of those writes. Every write's first answer is lost on its way back (lossy): each is
// stored once all the same, its retry answered as a replay.
func smallForum(t *testing.T) (string, []write) {
	t.Helper()
	dir := t.TempDir()
	r := &run{cfg: Config{Parley: parleyBinary, Database: SQLite, Dir: dir}, ledger: newLedger("t"), board: &board{}, stats: newStats(), begin: time.Now()}
	if err := r.openDatabase(context.Background()); err != nil {
		t.Fatal(err)
	}
	tokens := []string{}
	for _, h := range []string{"soak-0", "soak-1"} {
		tok, err := r.token(context.Background(), h)
		if err != nil {
			t.Fatal(err)
		}
		tokens = append(tokens, tok)
	}
	srv, err := newServer(parleyBinary, dir, r.dbURL, newMemory())
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.start(); err != nil {
		t.Fatal(err)
	}
	r.server = srv
	tr := &lossy{transport: &httpTransport{client: newHTTPClient(2), base: srv.base()}, lost: map[string]bool{}}
	for i := range 6 {
		a := &agent{n: i % 2, token: tokens[i%2], ext: extension(i % 2), tr: tr, r: r, rng: rand.New(rand.NewPCG(1, uint64(i))), seen: map[int64]bool{}, mine: map[int64][]int64{}}
		if i < 2 {
			a.send(context.Background()) // each opens a thread
			continue
		}
		a.own = r.board.topics[i%2]
		a.send(context.Background())
	}
	if err := srv.stop(); err != nil {
		t.Fatal(err)
	}
	if len(r.problems) > 0 {
		t.Fatalf("writing the forum: %v", r.problems)
	}
	if n := r.stats.get("replayed writes"); n != 6 {
		t.Fatalf("%d of 6 writes whose first answer was lost were answered as replays when sent again", n)
	}
	return r.dbURL, r.ledger.all()
}

// copyForum copies the SQLite file (and its write-ahead log, if any) to a new folder.
func copyForum(t *testing.T, dbURL string) string {
	t.Helper()
	from := strings.TrimPrefix(dbURL, "sqlite:")
	to := filepath.Join(t.TempDir(), filepath.Base(from))
	for _, suffix := range []string{"", "-wal", "-shm"} {
		b, err := os.ReadFile(from + suffix)
		if os.IsNotExist(err) && suffix != "" {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(to+suffix, b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return "sqlite:" + to
}

func spoil(t *testing.T, dbURL, sql string) {
	t.Helper()
	db, err := storage.Open(context.Background(), dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.ExecContext(context.Background(), sql); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
}
