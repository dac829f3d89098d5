package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"time"

	"github.com/parleyforum/parley/storage"
	"github.com/parleyforum/parley/web"
)

// newLogger is the server's log on w: text for a person at a terminal, or one JSON object a
// line for a log collector, from the configured level up.
func newLogger(w io.Writer, cfg Config) *slog.Logger {
	opts := &slog.HandlerOptions{Level: cfg.LogLevel}
	if cfg.LogFormat == "json" {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}

// metricsServer serves /metrics on an address of its own (--metrics-addr), to everyone who
// can reach it: the operator chose that address for the scraper. The same address serves the
// Go runtime's profiles under /debug/pprof/ (docs/operating.md): an operator who asks why a
// server spends its CPU or memory reads them from the running process, and the load tool
// reads the server's CPU profile per mode with them (docs/performance.md). They are never on
// the main address, which faces the network.
type metricsServer struct {
	log    *slog.Logger
	ln     net.Listener
	server *http.Server
	done   chan error
}

func startMetrics(addr string, m *web.Metrics, log *slog.Logger) (*metricsServer, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("cannot listen on %s for metrics: %v", addr, err)
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", m.Handler())
	mux.HandleFunc("GET /debug/pprof/", pprof.Index)
	mux.HandleFunc("GET /debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("GET /debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("GET /debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("GET /debug/pprof/trace", pprof.Trace)
	ms := &metricsServer{log: log, ln: ln, done: make(chan error, 1),
		server: &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}}
	go func() { ms.done <- ms.server.Serve(ln) }()
	return ms, nil
}

// stop ends the metrics server; a scrape in flight may finish within ctx.
func (ms *metricsServer) stop(ctx context.Context) {
	_ = ms.server.Shutdown(ctx)
	if err := <-ms.done; err != nil && !errors.Is(err, http.ErrServerClosed) {
		ms.log.Error("the metrics server failed", "err", err)
	}
}

// listenURL is where the connection that LISTENs for news connects (the wake-up of long
// polls and feeds across instances, PROTOCOL.md § 13): --listen-db, else the database itself.
// LISTEN holds a session open, which a transaction pooler such as pgbouncer does not keep, so
// behind one the operator names a direct URL here. "" for SQLite, whose instance is alone.
func listenURL(cfg Config, db *storage.DB) (string, error) {
	if db.Kind() != storage.Postgres {
		if cfg.ListenDB != "" {
			return "", usagef("--listen-db names a Postgres server for LISTEN, but --db is %s", db.URL())
		}
		return "", nil
	}
	if cfg.ListenDB == "" {
		return cfg.DB, nil
	}
	return cfg.ListenDB, nil
}

// checkListenDB proves at start that the listening connection's database answers, so that a
// wrong --listen-db is found now and not when the first long poll should wake.
func checkListenDB(ctx context.Context, url string) error {
	if url == "" {
		return nil
	}
	db, err := storage.Open(ctx, url)
	if err != nil {
		return fmt.Errorf("the listening database (--listen-db): %w", err)
	}
	return db.Close()
}
