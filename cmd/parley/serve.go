package main

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"net"
	"net/url"
	"os/signal"
	"syscall"
	"time"

	"github.com/parleyforum/parley/protocol"
	"github.com/parleyforum/parley/static"
	"github.com/parleyforum/parley/storage"
	"github.com/parleyforum/parley/web"
)

// shutdownTimeout is how long requests in flight may take to finish after SIGINT or SIGTERM.
// It covers the longest long poll (inbox_max_wait_seconds, 30 by default) with room to spare,
// and stays below the 30 s to 60 s that process supervisors wait before they kill.
const shutdownTimeout = 25 * time.Second

func runServe(ctx context.Context, s *stdio, c *command, args []string) error {
	f := newFlags(s, c)
	for _, name := range []string{"addr", "session-key", "trusted-proxies", "log-format", "log-level", "metrics-addr", "listen-db", "request-deadline", "public-read", "trust-realm"} {
		f.option(name)
	}
	if err := f.parseFlagsOnly(args); err != nil {
		return err
	}
	cfg, err := f.config()
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(ctx, syscall.SIGINT, syscall.SIGTERM)
	defer stop()

	err = serve(ctx, s, cfg)
	if err != nil && ctx.Err() != nil {
		// Stopped while starting: what failed was only cut short by the signal.
		fmt.Fprintln(s.out, "parley: stopped")
		return nil
	}
	return err
}

// serve runs the server until ctx ends, then shuts it down. The socket opens first, so that
// an address in use fails before the database is created or migrated; everything that needs
// the database happens before the server says it is listening (connections wait in the
// socket's queue until then), so that once it says so, nothing is left that could fail.
func serve(ctx context.Context, s *stdio, cfg Config) error {
	log := newLogger(s.err, cfg)
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return fmt.Errorf("cannot listen on %s: %v", cfg.Addr, err)
	}
	defer ln.Close() // a start that fails below; closed again, harmlessly, after a shutdown
	db, err := openMigratedWith(ctx, cfg, storage.Options{StatementTimeout: cfg.RequestDeadline})
	if err != nil {
		return err
	}
	defer db.Close()
	// listen is where the connection that LISTENs for news across instances connects; it is
	// proved to answer now, before the server says it listens.
	listen, err := listenURL(cfg, db)
	if err != nil {
		return err
	}
	if err := checkListenDB(ctx, listen); err != nil {
		return err
	}
	db.ListenOn(listen)
	sessionKey := cfg.SessionKey
	if sessionKey == "" {
		if sessionKey, _, err = db.SettingOrCreate(ctx, storage.SettingSessionKey, newSessionKey); err != nil {
			return fmt.Errorf("keeping the session key: %w", err)
		}
	}
	// The realm key is made on the first start and kept in the database (PROTOCOL.md § 14).
	realmKey, err := protocol.LoadRealmKey(ctx, db)
	if err != nil {
		return err
	}
	setupCode, err := pendingSetupCode(ctx, db)
	if err != nil {
		return err
	}
	if err := static.Check(); err != nil {
		// The pages still work, without htmx: worth a warning, not a refusal to start.
		log.Warn("the pages work without htmx", "err", err)
	}

	metrics := web.NewMetrics(db, parleyVersion())
	var metricsSrv *metricsServer
	if cfg.MetricsAddr != "" {
		if metricsSrv, err = startMetrics(cfg.MetricsAddr, metrics, log); err != nil {
			return err
		}
		defer metricsSrv.stop(context.Background())
	}
	app := web.New(web.Options{
		DB:               db,
		Realm:            cfg.Realm,
		Limits:           cfg.Limits,
		Version:          parleyVersion(),
		SessionKey:       sessionKey,
		RealmKey:         realmKey,
		Static:           static.FS(),
		Logger:           log,
		TrustedProxies:   cfg.TrustedProxies,
		Metrics:          metrics,
		MetricsElsewhere: metricsSrv != nil,
		RequestDeadline:  cfg.RequestDeadline,
		PublicRead:       cfg.PublicRead,
		TrustRealms:      cfg.TrustRealms,
	})
	served := make(chan error, 1)
	// Connections are bounded in number, in all and per client address, and held to the pace
	// of the slowest reader allowed (PROTOCOL.md § 19); they are closed as net/http closes
	// them: a client refused in the middle of its request reads the refusal instead of a reset.
	bounded := web.ListenerWith(ln, web.ListenerOptions{Limits: cfg.Limits, TrustedProxies: cfg.TrustedProxies, Metrics: metrics})
	go func() { served <- app.Listener(bounded) }()

	// The socket is listening, so connections from now on wait in its queue until the server
	// takes them: the line is true as soon as it is printed.
	base := baseURL(ln.Addr())
	metricsAt := ""
	if metricsSrv != nil {
		metricsAt = fmt.Sprintf(", metrics on %s/metrics", baseURL(metricsSrv.ln.Addr()))
	}
	fmt.Fprintf(s.out, "parley %s listening on %s (database %s, realm %s%s)\n", parleyVersion(), base, db.URL(), cfg.Realm, metricsAt)
	log.Info("serving", "addr", ln.Addr().String(), "trusted_proxies", fmt.Sprint(cfg.TrustedProxies), "log_level", cfg.LogLevel.String())
	if setupCode != "" {
		fmt.Fprintf(s.out, "no account yet: create the first one at %s/setup?code=%s\n", base, url.QueryEscape(setupCode))
	}

	select {
	case err := <-served:
		return fmt.Errorf("the server stopped: %v", err)
	case <-ctx.Done():
	}
	fmt.Fprintln(s.out, "parley: shutting down")
	if err := app.ShutdownWithTimeout(shutdownTimeout); err != nil {
		fmt.Fprintf(s.err, "parley: requests still running after %s were cut off\n", shutdownTimeout)
	}
	// A shutdown that came before the server took the listener finds nothing to close; closing
	// it here ends Listener in that case too.
	_ = ln.Close()
	<-served
	fmt.Fprintln(s.out, "parley: stopped")
	return nil
}

// pendingSetupCode is the one-time code of the setup address while the instance has no
// human account, and "" once it has one. The code stays the same across restarts until the
// first account exists, so an address printed earlier keeps working.
func pendingSetupCode(ctx context.Context, db *storage.DB) (string, error) {
	n, err := db.CountUsers(ctx)
	if err != nil {
		return "", fmt.Errorf("counting the users: %w", err)
	}
	if n > 0 {
		return "", nil
	}
	code, _, err := db.SettingOrCreate(ctx, storage.SettingSetupCode, newSetupCode)
	if err != nil {
		return "", fmt.Errorf("keeping the setup code: %w", err)
	}
	return code, nil
}

// baseURL is the address to reach a server listening on addr. A server listening on every
// interface is reached through localhost from the machine it runs on.
func baseURL(addr net.Addr) string {
	host, port, err := net.SplitHostPort(addr.String())
	if err != nil {
		return "http://" + addr.String()
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsUnspecified() {
		host = "localhost"
	}
	return "http://" + net.JoinHostPort(host, port)
}

// newSessionKey makes 256 random bits, hex: enough for any cookie signature and cipher key
// the pages derive from it.
func newSessionKey() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return hex.EncodeToString(b), nil
}

// newSetupCode makes 144 random bits in 24 URL-safe characters: unguessable, and short
// enough to type from a terminal into a browser.
func newSetupCode() (string, error) {
	b := make([]byte, 18)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return base64.RawURLEncoding.EncodeToString(b), nil
}
