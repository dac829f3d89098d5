package main

import (
	"context"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/parleyforum/parley/protocol"
	"github.com/parleyforum/parley/storage"
	"github.com/parleyforum/parley/storage/storagetest"
	"github.com/parleyforum/parley/web"
)

// The pgbench baseline writes what the server's sends write: two cycles of the conversation
// through the server, over HTTP, and the same two cycles through pgbench, each into a fresh
// database, leave the same rows in every table a send writes — the same count, the same
// columns set, the same kinds, states, awaitings, links and inbox positions. When a send
// comes to write something else, this fails until the script follows.
func TestPgbenchWritesWhatSendsWrite(t *testing.T) {
	const cycles = 2
	ctx := context.Background()

	served := storagetest.Open(t, storage.Postgres)
	url := startServer(t, served)
	tokens, err := agentTokens(ctx, &config{db: served.URL(), identities: 2, realm: "ainotes"}, "")
	if err != nil {
		t.Fatal(err)
	}
	h := newHTTPSender(url, tokens, 2)
	var th *thread
	for i := 0; i < cycles*len(cycle); i++ {
		cs := cycle[i%len(cycle)]
		agent := 0
		if cs.replier {
			agent = 1
		}
		st := step{kind: cs.kind, thread: th, from: cs.from, to: cs.to, body: bodyOf(cs.kind, fmt.Sprint(i))}
		if cs.kind == "ask" {
			st.thread = nil
		}
		out := h.do(ctx, agent, st)
		if !out.accepted || out.reason != "" {
			t.Fatalf("send %d (%s): %+v", i, cs.kind, out)
		}
		if cs.kind == "ask" {
			th = &thread{id: out.id, root: out.root}
		}
	}
	var identities []string
	if err := served.NewRaw("SELECT identity FROM tokens ORDER BY id").Scan(ctx, &identities); err != nil || len(identities) != 2 {
		t.Fatalf("tokens: %v %v", identities, err)
	}
	want := writtenRows(t, served, map[string]string{
		identities[0]: "asker", identities[1]: "replier", "agent-0": "asker's extension", "agent-1": "replier's extension",
	})

	bench := storagetest.Open(t, storage.Postgres)
	p, cleanup, err := newPgbench(bench.URL(), pgbenchScript())
	defer cleanup()
	if err != nil {
		t.Fatal(err)
	}
	run, err := p.run(ctx, 1, 0, cycles*len(cycle))
	if err != nil {
		t.Fatal(err)
	}
	if run.sends != cycles*len(cycle) || len(run.lat) != run.sends || run.elapsed <= 0 {
		t.Fatalf("pgbench ran %d sends in %v (%d latencies)", run.sends, run.elapsed, len(run.lat))
	}
	got := writtenRows(t, bench, map[string]string{
		"ainotes:bench-0": "asker", "ainotes:bench-reply-0": "replier", "agent-0": "asker's extension", "agent-reply-0": "replier's extension",
	})
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("the pgbench script writes other rows than the server's sends (-sends +pgbench):\n%s", diff)
	}
}

// writtenRows reads every table a send writes, each value made comparable between two
// databases: a time or a transaction id only as "set", a text only as "text", an identity or
// extension as its role.
func writtenRows(t *testing.T, db *storage.DB, roles map[string]string) map[string][]map[string]any {
	t.Helper()
	tables := map[string]string{
		"threads":      "id",
		"messages":     "id",
		"events":       "id",
		"feed":         "seq",
		"write_times":  "at, identity",
		"write_counts": "identity",
	}
	var inboxSeq int64
	if err := db.NewRaw("SELECT CASE WHEN is_called THEN last_value ELSE 0 END FROM inbox_seq").Scan(context.Background(), &inboxSeq); err != nil {
		t.Fatal(err)
	}
	out := map[string][]map[string]any{"inbox_seq": {{"value": inboxSeq}}}
	for table, order := range tables {
		var rows []map[string]any
		if err := db.NewRaw("SELECT * FROM "+table+" ORDER BY "+order).Scan(context.Background(), &rows); err != nil {
			t.Fatalf("%s: %v", table, err)
		}
		for _, r := range rows {
			for col, v := range r {
				r[col] = comparable(col, v, roles)
			}
		}
		out[table] = rows
	}
	return out
}

func comparable(col string, v any, roles map[string]string) any {
	switch {
	case v == nil:
		return nil
	case col == "tx" || col == "inbox_tx":
		if n, ok := v.(int64); ok && n == 0 {
			return int64(0)
		}
		return "set"
	case strings.HasSuffix(col, "_at") || col == "at":
		if _, ok := v.(time.Time); !ok {
			return fmt.Sprintf("not a time: %v", v)
		}
		return "set"
	case col == "body" || col == "title" || col == "search":
		if fmt.Sprint(v) == "" {
			return ""
		}
		return "text"
	}
	if s, ok := v.(string); ok {
		if role, ok := roles[s]; ok {
			return role
		}
	}
	return v
}

// startServer serves db on a free loopback port until the test ends, with a writes limit
// that load does not reach, and returns its URL.
func startServer(t *testing.T, db *storage.DB) string {
	t.Helper()
	limits := protocol.DefaultLimits()
	limits.WritesPerMinute = writeRateLimit
	app := web.New(web.Options{DB: db, Limits: limits, SessionKey: strings.Repeat("k", 32)})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = app.Listener(ln) }()
	t.Cleanup(func() { _ = app.ShutdownWithTimeout(5 * time.Second) })
	return "http://" + ln.Addr().String()
}
