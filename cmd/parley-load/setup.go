package main

import (
	"bufio"
	"context"
	crand "crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/parleyforum/parley/migrations"
	"github.com/parleyforum/parley/protocol"
	"github.com/parleyforum/parley/storage"
	"github.com/parleyforum/parley/storage/benchdata"
)

// setup makes the modes the flags ask for, in their order; with --launch it first starts the
// server and its database (launch.go).
func setup(ctx context.Context, c *config, stderr io.Writer) ([]*mode, func(), error) {
	var modes []*mode
	var closers []func()
	cleanup := func() {
		for i := len(closers) - 1; i >= 0; i-- {
			closers[i]()
		}
	}
	if c.launch != "" {
		stop, err := launch(ctx, c, stderr)
		closers = append(closers, stop)
		if err != nil {
			return nil, cleanup, err
		}
	}
	var tokens, scopedTokens []string
	var room *storage.Room
	if c.needs(modeHTTP, modeMCP) {
		var err error
		if tokens, err = agentTokens(ctx, c, ""); err != nil {
			return nil, cleanup, err
		}
	}
	if c.needs(modeScoped) {
		var err error
		if room, err = loadRoom(ctx, c); err != nil {
			return nil, cleanup, err
		}
		if scopedTokens, err = agentTokens(ctx, c, strconv.FormatInt(room.ID, 10)); err != nil {
			return nil, cleanup, err
		}
	}
	if c.needs(modePgbench, modeDirect) {
		if err := migrateBaseline(ctx, c.baselineDB); err != nil {
			return nil, cleanup, err
		}
	}
	if c.needs(modeMinimal) {
		if err := setupMinimal(ctx, c.baselineDB, c.agents); err != nil {
			return nil, cleanup, err
		}
	}
	var tag [4]byte
	_, _ = crand.Read(tag[:])
	for _, name := range c.modes {
		m := &mode{name: name, board: newBoard(c.agents), stats: newStats()}
		if c.keys && servedBy(name) {
			// Keys are an identity's own: a run of its own, a mode of its own.
			m.board.keys = "load-" + hex.EncodeToString(tag[:]) + "-" + name + "-"
		}
		switch name {
		case modeHTTP:
			m.sender = newHTTPSender(c.url, tokens, c.agents)
		case modeMCP:
			m.sender = newMCPSender(c.url, tokens, c.agents)
		case modeScoped:
			h := newHTTPSender(c.url, scopedTokens, c.agents)
			h.room = room.Name
			m.sender = h
		case modePgbench:
			p, remove, err := newPgbench(c.baselineDB, pgbenchScript())
			closers = append(closers, remove)
			if err != nil {
				return nil, cleanup, err
			}
			m.bench = p
		case modeMinimal:
			p, remove, err := newPgbench(c.baselineDB, minimalScript())
			closers = append(closers, remove)
			if err != nil {
				return nil, cleanup, err
			}
			m.bench = p
		case modeDirect:
			d, err := benchdata.OpenDirect(ctx, c.baselineDB)
			if err != nil {
				return nil, cleanup, err
			}
			closers = append(closers, func() { _ = d.Close() })
			m.sender, m.writesOnly = &directSender{d: d}, true
		}
		modes = append(modes, m)
	}
	return modes, cleanup, nil
}

// migrateBaseline migrates the baselines' database (it may be empty).
func migrateBaseline(ctx context.Context, rawURL string) error {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	db, err := storage.Open(ctx, rawURL)
	if err != nil {
		return fmt.Errorf("the baseline database: %w", err)
	}
	_, err = migrations.Up(ctx, db)
	if cerr := db.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("migrating the baseline database: %w", err)
	}
	return nil
}

// agentTokens reads the tokens file, or creates one token per identity in the server's
// database; scoped to rooms (their ids, "2,5", as storage.NewToken holds them) unless it is "".
func agentTokens(ctx context.Context, c *config, rooms string) ([]string, error) {
	if c.tokensFile != "" {
		return readTokens(c.tokensFile)
	}
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	db, err := storage.Open(ctx, c.db)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	run := strconv.FormatInt(time.Now().Unix(), 36)
	handle := "load-%s-%d"
	if rooms != "" {
		handle = "load-%s-scoped-%d"
	}
	var tokens []string
	for i := 0; i < c.identities; i++ {
		secret, err := protocol.NewTokenSecret()
		if err != nil {
			return nil, err
		}
		_, err = db.CreateToken(ctx, storage.NewToken{
			Identity:   protocol.AgentIdentity(c.realm, fmt.Sprintf(handle, run, i)),
			SecretHash: protocol.HashTokenSecret(secret),
			Rights:     "read,write",
			Rooms:      rooms,
		})
		if err != nil {
			return nil, fmt.Errorf("creating the agents' tokens (has the server migrated the database?): %w", err)
		}
		tokens = append(tokens, secret)
	}
	return tokens, nil
}

// loadRoom opens the room the mode scoped works in, a room of the run's own at the top of
// the forum.
func loadRoom(ctx context.Context, c *config) (*storage.Room, error) {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	db, err := storage.Open(ctx, c.db)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	name := "load-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	r := &storage.Room{Name: name, Title: "parley-load " + name}
	if err := db.Read().CreateRoom(ctx, r); err != nil {
		return nil, fmt.Errorf("opening the room of the mode scoped (has the server migrated the database?): %w", err)
	}
	return r, nil
}

// readTokens reads one token a line: the secret alone, or the JSON object that
// `parley token create --json` prints. Empty lines and lines starting with # are skipped.
func readTokens(path string) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var tokens []string
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		switch {
		case line == "" || strings.HasPrefix(line, "#"):
			continue
		case strings.HasPrefix(line, "{"):
			var t struct {
				Token string `json:"token"`
			}
			if err := json.Unmarshal([]byte(line), &t); err != nil || t.Token == "" {
				return nil, fmt.Errorf("%s:%d: not a token, nor the JSON of one", path, n)
			}
			tokens = append(tokens, t.Token)
		case strings.ContainsAny(line, " \t"):
			return nil, fmt.Errorf("%s:%d: a token is one word", path, n)
		default:
			tokens = append(tokens, line)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(tokens) == 0 {
		return nil, fmt.Errorf("%s holds no token", path)
	}
	return tokens, nil
}

// checkLoopback accepts an http(s) URL or a database URL only when it names this machine: a
// loopback address, a name that resolves only to loopback addresses, a unix socket, or a
// SQLite file.
func checkLoopback(raw string) error {
	switch {
	case strings.HasPrefix(raw, "sqlite:"):
		return nil
	case strings.HasPrefix(raw, "postgres://"), strings.HasPrefix(raw, "postgresql://"):
		cfg, err := pgx.ParseConfig(raw)
		if err != nil {
			return fmt.Errorf("%s: %v", storage.Redact(raw), err)
		}
		hosts := []string{cfg.Host}
		for _, fb := range cfg.Fallbacks {
			hosts = append(hosts, fb.Host)
		}
		for _, h := range hosts {
			if strings.HasPrefix(h, "/") {
				continue // a unix socket
			}
			if err := loopbackHost(h); err != nil {
				return fmt.Errorf("%s: %v", storage.Redact(raw), err)
			}
		}
		return nil
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("%q is not an http:// URL", raw)
	}
	return loopbackHost(u.Hostname())
}

func loopbackHost(host string) error {
	if host == "localhost" {
		return nil
	}
	if ip := net.ParseIP(host); ip != nil {
		if ip.IsLoopback() {
			return nil
		}
		return fmt.Errorf("%s is not a loopback address", host)
	}
	ips, err := net.LookupIP(host)
	if err != nil {
		return fmt.Errorf("cannot resolve %s: %v", host, err)
	}
	for _, ip := range ips {
		if !ip.IsLoopback() {
			return fmt.Errorf("%s resolves to %s, not a loopback address", host, ip)
		}
	}
	return nil
}
