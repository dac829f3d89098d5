package main

import (
	"bytes"
	"context"
	"encoding/json"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/parleyforum/parley/protocol"
	"github.com/parleyforum/parley/storage"
	"github.com/parleyforum/parley/storage/storagetest"
	"github.com/parleyforum/parley/web"
)

func TestMain(m *testing.M) { storagetest.Main(m) }

func TestCheckLoopback(t *testing.T) {
	for raw, ok := range map[string]bool{
		"http://127.0.0.1:8080":                         true,
		"http://[::1]:8080":                             true,
		"http://localhost:8080":                         true,
		"https://127.0.0.2":                             true,
		"http://10.1.2.3:8080":                          false,
		"http://192.168.0.1":                            false,
		"ftp://127.0.0.1":                               false,
		"127.0.0.1:8080":                                false,
		"sqlite:parley-data/parley.db":                  true,
		"postgres://u@127.0.0.1:5432/parley":            true,
		"postgres://u@10.0.0.5:5432/parley":             false,
		"postgresql:///parley?host=/var/run/postgresql": true,
		"postgres://u@127.0.0.1,10.0.0.5:5432/parley":   false,
	} {
		if err := checkLoopback(raw); (err == nil) != ok {
			t.Errorf("checkLoopback(%q) = %v, want ok %v", raw, err, ok)
		}
	}
}

func TestFlags(t *testing.T) {
	tokens := filepath.Join(t.TempDir(), "tokens")
	if err := os.WriteFile(tokens, []byte("secret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		ok   bool
	}{
		{[]string{"--url", "http://127.0.0.1:1", "--tokens", tokens}, true},
		{[]string{"--baseline-db", "sqlite:x.db", "--requests", "10"}, true},
		{[]string{}, false},
		{[]string{"--url", "http://127.0.0.1:1"}, false},
		{[]string{"--url", "http://127.0.0.1:1", "--tokens", tokens, "--db", "sqlite:x.db"}, false},
		{[]string{"--url", "http://10.0.0.1:1", "--tokens", tokens}, false},
		{[]string{"--url", "http://10.0.0.1:1", "--tokens", tokens, "--allow-remote"}, true},
		{[]string{"--baseline-db", "postgres://u@10.0.0.1/db"}, false},
		{[]string{"--url", "http://127.0.0.1:1", "--tokens", tokens, "--agents", "0"}, false},
		{[]string{"--url", "http://127.0.0.1:1", "--tokens", tokens, "--duration", "2h"}, false},
		{[]string{"--url", "http://127.0.0.1:1", "--tokens", tokens, "--requests", "-1"}, false},
		{[]string{"--url", "http://127.0.0.1:1", "--tokens", tokens, "extra"}, false},
		{[]string{"--url", "http://127.0.0.1:1", "--tokens", tokens, "--modes", "http,mcp"}, true},
		{[]string{"--url", "http://127.0.0.1:1", "--tokens", tokens, "--modes", "http,ftp"}, false},
		{[]string{"--url", "http://127.0.0.1:1", "--tokens", tokens, "--baseline", "pgbench"}, false},
		{[]string{"--url", "http://127.0.0.1:1", "--tokens", tokens, "--baseline", "pgbench", "--baseline-db", "sqlite:x.db"}, false},
		{[]string{"--url", "http://127.0.0.1:1", "--tokens", tokens, "--baseline", "pgbench", "--baseline-db", "postgres://u@127.0.0.1/b"}, true},
		{[]string{"--url", "http://127.0.0.1:1", "--tokens", tokens, "--baseline", "other", "--baseline-db", "postgres://u@127.0.0.1/b"}, false},
		{[]string{"--baseline-db", "sqlite:x.db", "--modes", "mcp"}, false},
		{[]string{"--url", "http://127.0.0.1:1", "--tokens", tokens, "--mix", "mixed"}, true},
		{[]string{"--url", "http://127.0.0.1:1", "--tokens", tokens, "--mix", "read"}, false},
		{[]string{"--launch", "bin/parley"}, true},
		{[]string{"--launch", "bin/parley", "--launch-db", "sqlite", "--modes", "http,pgbench"}, false},
		{[]string{"--launch", "bin/parley", "--url", "http://127.0.0.1:1"}, false},
		{[]string{"--launch", "bin/parley", "--launch-db", "mysql"}, false},
		{[]string{"--url", "http://127.0.0.1:1", "--tokens", tokens, "--launch-on-disk"}, false},
		{[]string{"--url", "http://127.0.0.1:1", "--db", "sqlite:x.db", "--modes", "http,scoped"}, true},
		{[]string{"--url", "http://127.0.0.1:1", "--tokens", tokens, "--modes", "scoped"}, false},
		{[]string{"--baseline-db", "sqlite:x.db", "--modes", "scoped"}, false},
		{[]string{"--launch", "bin/parley", "--modes", "http,scoped"}, true},
	} {
		c2, err := parseFlags(c.args, new(bytes.Buffer))
		if (err == nil) != c.ok {
			t.Errorf("parseFlags(%q) = %v, want ok %v", c.args, err, c.ok)
		}
		if err == nil && (c2.duration <= 0 || c2.rounds < 1 || c2.identities < 1) {
			t.Errorf("parseFlags(%q) leaves no bound: %+v", c.args, c2)
		}
	}
}

func TestReadTokens(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	got, err := readTokens(write("ok", "# agents\nplain-secret\n\n"+`{"token":"json-secret","identity":"ainotes:a","rights":["read","write"],"label":null,"id":3}`+"\n"))
	if err != nil || strings.Join(got, ",") != "plain-secret,json-secret" {
		t.Errorf("readTokens = %q, %v", got, err)
	}
	for name, content := range map[string]string{
		"empty":  "# nothing\n",
		"spaces": "two words\n",
		"json":   `{"identity":"ainotes:a"}` + "\n",
	} {
		if _, err := readTokens(write(name, content)); err == nil {
			t.Errorf("readTokens accepted %q", content)
		}
	}
}

// The scheduler's conversations break no rule: nobody answers or notes under its own question,
// only the asker decides and closes, and a close follows a decision.
func TestBoardKeepsTheRules(t *testing.T) {
	const agents = 5
	b := newBoard(agents)
	rng := rand.New(rand.NewPCG(1, 2))
	var next int64 = 1
	counts := map[string]int{}
	for i := 0; i < 5000; i++ {
		a := i % agents
		st := b.next(a, rng)
		counts[st.kind]++
		switch st.kind {
		case "ask":
			b.asked(a, next, next*10)
			next++
		case "answer", "note":
			if st.thread.asker == a {
				t.Fatalf("agent %d replies under its own question", a)
			}
		case "decide", "close":
			if st.thread.asker != a {
				t.Fatalf("agent %d %ss another's question", a, st.kind)
			}
			if st.kind == "close" && st.from != "decided" {
				t.Fatalf("a close from %q", st.from)
			}
		}
		if st.kind == "answer" && st.from == "open" && st.to != "answered" {
			t.Fatalf("the first answer does not propose answered: %+v", st)
		}
	}
	for _, kind := range []string{"ask", "answer", "note", "decide", "close"} {
		if counts[kind] == 0 {
			t.Errorf("no %s in 5000 steps: %v", kind, counts)
		}
	}
}

// A short run against a server in this process and the baseline beside it: tokens made in
// the server's database, nothing refused, and both modes and their ratio reported.
func TestRun(t *testing.T) {
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		limits := protocol.DefaultLimits()
		limits.WritesPerMinute = 1_000_000
		app := web.New(web.Options{DB: db, Limits: limits, SessionKey: strings.Repeat("k", 32)})
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		go func() { _ = app.Listener(ln) }()
		t.Cleanup(func() { _ = app.ShutdownWithTimeout(5 * time.Second) })

		baseline := storagetest.NewURL(t, db.Kind())
		var out, errs bytes.Buffer
		code := run(context.Background(), []string{
			"--url", "http://" + ln.Addr().String(), "--db", db.URL(), "--baseline-db", baseline,
			"--agents", "4", "--identities", "2", "--requests", "240", "--rounds", "2", "--json",
		}, &out, &errs)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errs.String())
		}
		var rep report
		if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
			t.Fatalf("%v in %s", err, out.String())
		}
		if len(rep.Modes) != 2 || rep.Ratio == nil || *rep.Ratio <= 0 {
			t.Fatalf("report: %s", out.String())
		}
		for _, m := range rep.Modes {
			if m.Requests != 240 || m.Accepted != 240 || len(m.Refused) != 0 || m.P50 <= 0 || m.Throughput <= 0 {
				t.Errorf("%s: %+v", m.Mode, m)
			}
		}
		var threads int
		if err := db.NewRaw("SELECT COUNT(*) FROM threads").Scan(context.Background(), &threads); err != nil || threads < 4 {
			t.Errorf("the server holds %d threads (%v)", threads, err)
		}
	})
}
