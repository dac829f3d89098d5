package web_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/netip"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/parleyforum/parley/storage"
	"github.com/parleyforum/parley/storage/storagetest"
	"github.com/parleyforum/parley/web"
)

// newObservedForum is newForum with the options of the operator's side of the app, and a
// JSON log.
func newObservedForum(t *testing.T, db *storage.DB, opts web.Options) *forum {
	t.Helper()
	logs := new(syncBuffer)
	opts.DB, opts.Version = db, "test"
	opts.Logger = slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	f := &forum{t: t, db: db, logs: logs, app: web.New(opts)}
	f.base = serve(t, f.app)
	f.alice = f.token("ainotes:alice", false, "read,write", nil)
	f.bob = f.token("ainotes:bob", false, "read,write", nil)
	f.reader = f.token("ainotes:reader", false, "read", nil)
	return f
}

// scrape reads /metrics; metric(name, labels) then finds one series' value in it, 0 when
// the series is not there.
type scrape string

func (f *forum) scrape() scrape {
	f.t.Helper()
	r := f.must(f.get("/metrics", ""), http.StatusOK)
	return scrape(r.body)
}

func (s scrape) metric(name, labels string) float64 {
	series := name
	if labels != "" {
		series += "{" + labels + "}"
	}
	sc := bufio.NewScanner(strings.NewReader(string(s)))
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), series+" "); ok {
			n, _ := strconv.ParseFloat(v, 64)
			return n
		}
	}
	return 0
}

// The counters move with the requests made, over both transports, and a long poll counts as
// a waiter while it waits.
func TestMetricsCountRequests(t *testing.T) {
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		// Heartbeats often, so that a feed stream whose listener left is noticed at once.
		f := newObservedForum(t, db, web.Options{Feed: web.FeedOptions{Heartbeat: 100 * time.Millisecond}})
		before := f.scrape()

		thread, msg := f.ask(f.alice, "Which port?")
		f.must(f.post("/v1/messages", f.alice, `{"kind":"note","thread":"`+thread+`","parent":"`+msg+`","body":"mine"}`), http.StatusConflict)
		f.must(f.get("/v1/nowhere", f.alice), http.StatusNotFound)
		cs := f.mcp(f.bob)
		toolOK(t, cs, "send", `{"kind":"answer","thread":"`+thread+`","body":"8080"}`)
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "send", Arguments: json.RawMessage(`{"kind":"note","body":"x","colour":"red"}`)})
		if err != nil || !res.IsError {
			t.Fatalf("send with an unknown field: %v %+v", err, res)
		}

		after := f.scrape()
		for _, c := range []struct{ name, labels string }{
			{"parley_requests_total", `operation="POST /v1/messages",outcome="ok",transport="http"`},
			{"parley_requests_total", `operation="POST /v1/messages",outcome="self_reply",transport="http"`},
			{"parley_requests_total", `operation="unmatched",outcome="not_found",transport="http"`},
			{"parley_requests_total", `operation="send",outcome="ok",transport="mcp"`},
			{"parley_requests_total", `operation="send",outcome="invalid_body",transport="mcp"`},
			{"parley_writes_total", `kind="ask"`},
			{"parley_writes_total", `kind="answer"`},
			{"parley_refusals_total", `reason="self_reply",transport="http"`},
			{"parley_refusals_total", `reason="invalid_body",transport="mcp"`},
			{"parley_request_duration_seconds_count", `operation="POST /v1/messages",transport="http"`},
		} {
			if got := after.metric(c.name, c.labels) - before.metric(c.name, c.labels); got != 1 && !(c.name == "parley_request_duration_seconds_count" && got == 2) {
				t.Errorf("%s{%s} moved by %v", c.name, c.labels, got)
			}
		}
		if after.metric("parley_build_info", `version="test"`) != 1 {
			t.Errorf("no parley_build_info for version test")
		}
		if !regexp.MustCompile(`(?m)^go_sql_open_connections\{db_name="` + string(db.Kind()) + `"\} [1-9]`).MatchString(string(after)) {
			t.Errorf("the database pool's metrics are missing")
		}
		if !regexp.MustCompile(`(?m)^go_sql_max_open_connections\{db_name="` + string(db.Kind()) + `-long-reads"\} [1-9]`).MatchString(string(after)) {
			t.Errorf("the metrics of the pool of long reads are missing")
		}

		// A long poll is a waiter until it answers, over either transport.
		cursor := f.must(f.get("/v1/inbox", f.reader), http.StatusOK).at("cursor")
		done := make(chan error, 2)
		go func() {
			r := f.get("/v1/inbox?wait_seconds=2&since="+cursor, f.reader)
			done <- reply200(r)
		}()
		f.waitForMetric("parley_long_poll_waiters", 1)
		go func() {
			_, err := f.mcp(f.reader).CallTool(context.Background(), &mcp.CallToolParams{Name: "inbox",
				Arguments: json.RawMessage(`{"wait_seconds":2,"since":"` + cursor + `"}`)})
			done <- err
		}()
		f.waitForMetric("parley_long_poll_waiters", 2)
		for range 2 {
			if err := <-done; err != nil {
				t.Fatalf("long poll: %v", err)
			}
		}
		if n := f.scrape().metric("parley_long_poll_waiters", ""); n != 0 {
			t.Errorf("%v waiters after the long polls answered", n)
		}

		// A feed stream counts as open while its listener reads, and no longer once it leaves.
		ctx, leave := context.WithCancel(context.Background())
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, f.base+"/v1/feed", nil)
		req.Header.Set("Authorization", "Bearer "+f.reader)
		stream, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		f.waitForMetric("parley_feed_streams", 1)
		leave()
		stream.Body.Close()
		f.waitForMetric("parley_feed_streams", 0)
	})
}

// waitForMetric waits until /metrics shows name (without labels) at n.
func (f *forum) waitForMetric(name string, n float64) {
	f.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for f.scrape().metric(name, "") != n {
		if time.Now().After(deadline) {
			f.t.Fatalf("%s never reached %v", name, n)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func reply200(r *reply) error {
	if r.status != http.StatusOK {
		return fmt.Errorf("status %d: %s", r.status, r.body)
	}
	return nil
}

// /metrics on the main address answers loopback clients that come directly, and nobody
// else; with its own address it is not on the main address at all.
func TestMetricsOnlyOnLoopback(t *testing.T) {
	db := storagetest.Open(t, storage.SQLite)
	f := newObservedForum(t, db, web.Options{})
	f.must(f.get("/metrics", ""), http.StatusOK)
	f.must(f.do(request{method: http.MethodGet, target: "/metrics", header: map[string]string{"X-Forwarded-For": "127.0.0.1"}}), http.StatusNotFound)
	f.must(f.do(request{method: http.MethodGet, target: "/metrics", header: map[string]string{"Forwarded": "for=192.0.2.1"}}), http.StatusNotFound)
	// app.Test's connections come from 0.0.0.0, not from loopback.
	if status, _, _ := do(t, f.app, http.MethodGet, "/metrics"); status != http.StatusNotFound {
		t.Errorf("GET /metrics from 0.0.0.0: %d, want 404", status)
	}

	elsewhere := newObservedForum(t, db, web.Options{MetricsElsewhere: true})
	elsewhere.must(elsewhere.get("/metrics", ""), http.StatusNotFound)
}

// accessLine is one access log line as JSON.
type accessLine struct {
	Msg        string  `json:"msg"`
	Level      string  `json:"level"`
	RequestID  string  `json:"request_id"`
	Method     string  `json:"method"`
	Route      string  `json:"route"`
	Transport  string  `json:"transport"`
	Operation  string  `json:"operation"`
	Status     int     `json:"status"`
	Reason     string  `json:"reason"`
	DurationMS float64 `json:"duration_ms"`
	Identity   string  `json:"identity"`
	Client     string  `json:"client"`
}

func (f *forum) logLines() []accessLine {
	f.t.Helper()
	var lines []accessLine
	for _, raw := range strings.Split(strings.TrimSpace(f.logs.String()), "\n") {
		var l accessLine
		if err := json.Unmarshal([]byte(raw), &l); err != nil {
			f.t.Fatalf("log line not JSON: %v: %s", err, raw)
		}
		lines = append(lines, l)
	}
	return lines
}

// One access line per request, with the request id it came with or was given, the real
// client behind a trusted proxy, who asked and how it ended; never a token or a body. Every
// other line of the request carries the same id.
func TestAccessLog(t *testing.T) {
	db := storagetest.Open(t, storage.SQLite)
	f := newObservedForum(t, db, web.Options{TrustedProxies: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}})
	body := `{"kind":"ask","body":"a secret question"}`
	r := f.must(f.do(request{method: http.MethodPost, target: "/v1/messages", token: f.alice, body: body,
		header: map[string]string{"X-Request-Id": "req-42", "X-Forwarded-For": "198.51.100.7"}}), http.StatusCreated)
	if got := r.header.Get("X-Request-Id"); got != "req-42" {
		t.Errorf("X-Request-Id answered %q, want req-42", got)
	}
	r = f.must(f.get("/v1/threads/th_999", f.reader), http.StatusNotFound)
	generated := r.header.Get("X-Request-Id")
	if !regexp.MustCompile(`^[0-9a-f]{16}$`).MatchString(generated) {
		t.Errorf("a request without an id was given %q", generated)
	}
	f.must(f.do(request{method: http.MethodGet, target: "/healthz", header: map[string]string{"X-Request-Id": "bad id with spaces"}}), http.StatusOK)

	lines := f.logLines()
	want := []accessLine{
		{Msg: "request", Level: "INFO", RequestID: "req-42", Method: "POST", Route: "POST /v1/messages", Transport: "http",
			Operation: "POST /v1/messages", Status: 201, Reason: "", Identity: "ainotes:alice", Client: "198.51.100.7"},
		{Msg: "request", Level: "INFO", RequestID: generated, Method: "GET", Route: "GET /v1/threads/:id", Transport: "http",
			Operation: "GET /v1/threads/:id", Status: 404, Reason: "not_found", Identity: "ainotes:reader", Client: "127.0.0.1"},
	}
	if len(lines) != 3 {
		t.Fatalf("%d log lines, want 3:\n%s", len(lines), f.logs)
	}
	for i, w := range want {
		got := lines[i]
		if got.DurationMS <= 0 {
			t.Errorf("line %d: duration %v", i, got.DurationMS)
		}
		got.DurationMS = 0
		if got != w {
			t.Errorf("line %d:\n got %+v\nwant %+v", i, got, w)
		}
	}
	if id := lines[2].RequestID; id == "bad id with spaces" || len(id) != 16 {
		t.Errorf("an unusable X-Request-Id was kept as %q", id)
	}
	for _, secret := range []string{f.alice, f.reader, "a secret question"} {
		if strings.Contains(f.logs.String(), secret) {
			t.Errorf("the log shows %q", secret)
		}
	}

	// A line logged inside a request carries its id.
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	f.must(f.do(request{method: http.MethodGet, target: "/healthz", header: map[string]string{"X-Request-Id": "req-down"}}), http.StatusServiceUnavailable)
	var ids []string
	for _, l := range f.logLines()[3:] {
		ids = append(ids, l.Level+" "+l.RequestID)
	}
	if strings.Join(ids, ",") != "WARN req-down,INFO req-down" {
		t.Errorf("lines of the failed health check: %v", ids)
	}
}
