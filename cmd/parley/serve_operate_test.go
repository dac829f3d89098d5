package main

import (
	"encoding/json"
	"net"
	"net/http"
	"strings"
	"syscall"
	"testing"

	"github.com/parleyforum/parley/storage"
	"github.com/parleyforum/parley/storage/storagetest"
)

// parley serve as an operator runs it: JSON logs that show the client behind a trusted
// proxy, and metrics on an address of their own.
func TestServeLogsAndMetrics(t *testing.T) {
	metricsAddr := freeAddress(t)
	srv := startServe(t, "--db", "sqlite:"+t.TempDir()+"/parley.db", "--log-format", "json",
		"--metrics-addr", metricsAddr, "--trusted-proxies", "127.0.0.0/8")
	if !srv.said("metrics on http://" + metricsAddr + "/metrics") {
		t.Errorf("serve did not name its metrics address: %q", srv.output)
	}
	req, _ := http.NewRequest(http.MethodGet, srv.base+"/healthz", nil)
	req.Header.Set("X-Request-Id", "probe-1")
	req.Header.Set("X-Forwarded-For", "203.0.113.5")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()

	status, body := get(t, "http://"+metricsAddr+"/metrics")
	if status != http.StatusOK || !strings.Contains(body, `parley_requests_total{operation="GET /healthz",outcome="ok",transport="web"} 1`) {
		t.Errorf("GET /metrics on --metrics-addr = %d, without the health check counted:\n%.2000s", status, body)
	}
	if status, _ := get(t, srv.base+"/metrics"); status != http.StatusNotFound {
		t.Errorf("GET /metrics on the main address = %d, want 404 when --metrics-addr is set", status)
	}
	// The runtime's profiles on the metrics address, and never on the main one.
	if status, body := get(t, "http://"+metricsAddr+"/debug/pprof/profile?seconds=1"); status != http.StatusOK || len(body) == 0 {
		t.Errorf("GET /debug/pprof/profile on --metrics-addr = %d with %d bytes, want a CPU profile", status, len(body))
	}
	if status, body := get(t, "http://"+metricsAddr+"/debug/pprof/heap?debug=1"); status != http.StatusOK || !strings.Contains(body, "heap profile") {
		t.Errorf("GET /debug/pprof/heap on --metrics-addr = %d:\n%.300s", status, body)
	}
	for _, path := range []string{"/debug/pprof/", "/debug/pprof/profile?seconds=1", "/debug/pprof/heap"} {
		if status, _ := get(t, srv.base+path); status != http.StatusNotFound {
			t.Errorf("GET %s on the main address = %d, want 404", path, status)
		}
	}
	srv.stop(syscall.SIGTERM)

	found := false
	for _, line := range strings.Split(strings.TrimSpace(srv.stderr.String()), "\n") {
		var l struct{ Msg, RequestID, Client, Route string }
		var raw map[string]any
		if err := json.Unmarshal([]byte(line), &raw); err != nil {
			t.Fatalf("a log line is not JSON: %q", line)
		}
		l.Msg, _ = raw["msg"].(string)
		l.RequestID, _ = raw["request_id"].(string)
		l.Client, _ = raw["client"].(string)
		l.Route, _ = raw["route"].(string)
		if l.Msg == "request" && l.RequestID == "probe-1" {
			found = true
			if l.Client != "203.0.113.5" || l.Route != "GET /healthz" {
				t.Errorf("access line %q: want client 203.0.113.5 and route GET /healthz", line)
			}
		}
	}
	if !found {
		t.Errorf("no access line with request id probe-1 in %q", srv.stderr)
	}
}

// --listen-db names a Postgres server for a Postgres database, and one that answers.
func TestServeListenDB(t *testing.T) {
	unreachable := "postgres://parley@127.0.0.1:1/parley?sslmode=disable"
	r := parley(t, "serve", "--addr", "127.0.0.1:0", "--db", "sqlite:"+t.TempDir()+"/p.db", "--listen-db", unreachable)
	r.fails(t, "serve with --listen-db on SQLite", exitUsage, "--listen-db")

	dbURL := storagetest.NewURL(t, storage.Postgres)
	r = parley(t, "serve", "--addr", "127.0.0.1:0", "--db", dbURL, "--listen-db", unreachable)
	r.fails(t, "serve with an unreachable --listen-db", exitRuntime, "the listening database")

	srv := startServe(t, "--db", dbURL, "--listen-db", dbURL)
	srv.stop(syscall.SIGTERM)
}

// freeAddress is a loopback address with a port that was free a moment ago.
func freeAddress(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}
