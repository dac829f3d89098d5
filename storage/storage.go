// Package storage keeps Parley's data on Postgres or the embedded SQLite through one set of bun
// models and queries. It knows SQL and nothing about HTTP or the protocol's rules.
package storage

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"
	"github.com/uptrace/bun/dialect/sqlitedialect"
	_ "modernc.org/sqlite" // registers the pure-Go "sqlite" driver
)

// DB is an open Parley database.
type DB struct {
	*bun.DB
	kind Kind
	url  string
	// preparedMode is how the few statements of the hot path run on Postgres (reply_pg.go):
	// prepared once per connection, unless the URL names another default_query_exec_mode.
	preparedMode pgx.QueryExecMode
	changes      *Changes
	tokens       *tokenCache // the verified agent tokens, on Postgres (token_cache.go)
	// listenURL is where the connection that LISTENs for changes connects; "" is url.
	listenURL string
	// writes is the pool read-write transactions begin on. On a SQLite file it is a pool of
	// one connection of its own: SQLite allows one writer at a time anyway, and a connection
	// that alone writes keeps its page cache from one write to the next — a connection finds
	// its cache stale, and drops it, whenever another connection has committed since its last
	// transaction, so writes that took turns on the readers' pool read their pages anew each
	// time. Elsewhere it is the pool itself.
	writes *bun.DB
	// On SQLite: the hot path's prepared statements on each pool (hotpath_sqlite.go), and the
	// one writer: a read-write transaction of this process holds writer from before its
	// BEGIN IMMEDIATE to its end, so that writers queue here, in turn, instead of in SQLite's
	// busy handler, which sleeps between its tries (1 ms growing to 100 ms) while others take
	// the lock.
	sqliteWrites, sqliteReads sqliteStatements
	writer                    chan struct{}
	// longReads is the pool of long reads (long_reads.go): exports take their snapshots
	// from it, so that readers who hold them for minutes never take the forum's connections.
	// An in-memory SQLite database has one connection, which is this too.
	longReads *bun.DB
}

// Kind names the database product behind a DB.
type Kind string

const (
	Postgres Kind = "postgres"
	SQLite   Kind = "sqlite"
)

// DefaultURL is where the embedded database lives when nothing else is configured.
const DefaultURL = "sqlite:parley-data/parley.db"

// Options tune how a database is opened; the zero value means the defaults.
type Options struct {
	// StatementTimeout is Postgres's statement_timeout for every connection: the server ends
	// a statement that runs longer, even when the client that sent it is gone or hung. 0
	// leaves the server's setting. SQLite has no such setting; a request's deadline ends its
	// work there.
	StatementTimeout time.Duration
}

// Open connects to the database named by rawURL (postgres://…, postgresql://…, sqlite:PATH or
// sqlite::memory:) and checks that it answers. The schema is not touched: see migrations.
func Open(ctx context.Context, rawURL string) (*DB, error) {
	return OpenWith(ctx, rawURL, Options{})
}

// OpenWith is Open with options.
func OpenWith(ctx context.Context, rawURL string, opts Options) (*DB, error) {
	kind, dsn, err := parseURL(rawURL)
	if err != nil {
		return nil, err
	}
	var db *DB
	switch kind {
	case Postgres:
		sqldb, long, preparedMode, err := openPostgres(dsn, opts)
		if err != nil {
			return nil, err
		}
		db = &DB{DB: bun.NewDB(sqldb, pgdialect.New()), kind: kind, url: rawURL, preparedMode: preparedMode}
		db.writes = db.DB
		db.longReads = bun.NewDB(long, pgdialect.New())
	case SQLite:
		sqldb, writes, long, err := openSQLite(dsn)
		if err != nil {
			return nil, err
		}
		db = &DB{DB: bun.NewDB(sqldb, sqlitedialect.New()), kind: kind, url: rawURL, writer: make(chan struct{}, 1)}
		db.writes, db.longReads = db.DB, db.DB
		if writes != nil {
			db.writes = bun.NewDB(writes, sqlitedialect.New())
		}
		if long != nil {
			db.longReads = bun.NewDB(long, sqlitedialect.New())
		}
		db.sqliteWrites.pool, db.sqliteReads.pool = db.writes.DB, db.DB.DB
	}
	db.changes = newChanges()
	db.tokens = newTokenCache()
	if kind == Postgres {
		db.changes.listen = func(ctx context.Context) { db.listenPostgres(ctx, db.changes) }
	}
	pingCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	for _, pool := range db.pools() {
		if err := pool.PingContext(pingCtx); err != nil {
			_ = db.Close()
			return nil, fmt.Errorf("cannot reach the database at %s: %w", Redact(rawURL), translate(err))
		}
	}
	return db, nil
}

// ListenOn names another server address for the one connection that LISTENs for changes
// (a direct one, when url goes through a transaction pooler that keeps no session). It is
// called before anything waits for a change: the connection opens with the first waiter.
func (db *DB) ListenOn(url string) { db.listenURL = url }

// Changes is the signal of inbox changes on this database (see notify.go).
func (db *DB) Changes() *Changes { return db.changes }

// Close stops listening for changes and closes every connection.
func (db *DB) Close() error {
	db.changes.close()
	db.sqliteWrites.close()
	db.sqliteReads.close()
	var err error
	for _, pool := range db.pools() {
		err = errors.Join(err, pool.Close())
	}
	return err
}

// pools are the database's connection pools: the readers' (db.DB), the long reads', and on a
// SQLite file the writer's of one connection.
func (db *DB) pools() []*bun.DB {
	out := []*bun.DB{db.DB}
	for _, pool := range []*bun.DB{db.writes, db.longReads} {
		if pool != nil && pool != db.DB {
			out = append(out, pool)
		}
	}
	return out
}

// WriterPool is the pool of the writer's own connection on a SQLite file, and nil where
// transactions begin on the pool itself (Postgres, an in-memory SQLite database).
func (db *DB) WriterPool() *sql.DB {
	if db.writes == nil || db.writes == db.DB {
		return nil
	}
	return db.writes.DB
}

// Kind reports which database product this is.
func (db *DB) Kind() Kind { return db.kind }

// URL is the URL the database was opened with, password removed.
func (db *DB) URL() string { return Redact(db.url) }

// Healthy reports whether the database answers within the context's deadline.
func (db *DB) Healthy(ctx context.Context) error {
	if err := db.PingContext(ctx); err != nil {
		return translate(err)
	}
	var one int
	if err := db.NewRaw("SELECT 1").Scan(ctx, &one); err != nil {
		return translate(err)
	}
	return nil
}

// Tx runs fn in one read-write transaction: everything fn writes is committed together or not
// at all. Errors come back translated (ErrNotFound, ErrAlreadyExists, ErrUnavailable).
func (db *DB) Tx(ctx context.Context, fn func(ctx context.Context, tx bun.Tx) error) error {
	release, err := db.takeWriter(ctx)
	if err != nil {
		return err
	}
	defer release()
	return translate(runTx(ctx, db.writes, fn))
}

// takeWriter waits for this process's turn to write on SQLite (see DB.writer) and returns
// what gives it up; elsewhere it returns at once.
func (db *DB) takeWriter(ctx context.Context) (release func(), err error) {
	if db.writer == nil {
		return func() {}, nil
	}
	select {
	case db.writer <- struct{}{}:
		return func() { <-db.writer }, nil
	case <-ctx.Done():
		return nil, translate(ctx.Err())
	}
}

func parseURL(raw string) (Kind, string, error) {
	switch {
	case strings.HasPrefix(raw, "postgres://"), strings.HasPrefix(raw, "postgresql://"):
		if _, err := url.Parse(raw); err != nil {
			return "", "", fmt.Errorf("invalid database URL %q: %v", Redact(raw), err)
		}
		return Postgres, raw, nil
	case strings.HasPrefix(raw, "sqlite:"):
		path := strings.TrimPrefix(raw, "sqlite:")
		path = strings.TrimPrefix(path, "//")
		if path == "" {
			return "", "", fmt.Errorf("invalid database URL %q: sqlite: needs a path or :memory:", raw)
		}
		return SQLite, path, nil
	default:
		return "", "", fmt.Errorf("invalid database URL %q: use postgres://… or sqlite:PATH", Redact(raw))
	}
}

// openPostgres opens the pool and says how the hot path's statements run. They are prepared
// once per connection (pgx's statement cache) unless the URL names a default_query_exec_mode:
// a transaction pooler such as pgbouncer before 1.21 hands each transaction another server
// connection, where a statement prepared on the last one does not exist, so behind it the
// operator names a mode without named statements (cache_describe, exec or simple_protocol;
// docs/operating.md).
func openPostgres(dsn string, opts Options) (pool, long *sql.DB, _ pgx.QueryExecMode, _ error) {
	cfg, err := pgConfig(dsn, opts)
	if err != nil {
		return nil, nil, 0, err
	}
	preparedMode := pgx.QueryExecModeCacheStatement
	if u, err := url.Parse(dsn); err == nil && u.Query().Has("default_query_exec_mode") {
		preparedMode = cfg.DefaultQueryExecMode
	}
	// bun writes every value into the SQL text, so statements never repeat: preparing each
	// (pgx's default) costs an extra round trip and server work for nothing.
	cfg.DefaultQueryExecMode = pgx.QueryExecModeSimpleProtocol
	sqldb := stdlib.OpenDB(*cfg)
	sqldb.SetMaxOpenConns(postgresConnections)
	sqldb.SetMaxIdleConns(postgresConnections)
	sqldb.SetConnMaxIdleTime(5 * time.Minute)
	long = stdlib.OpenDB(*cfg)
	long.SetMaxOpenConns(postgresConnections / 4)
	long.SetMaxIdleConns(1)
	long.SetConnMaxIdleTime(5 * time.Minute)
	return sqldb, long, preparedMode, nil
}

// The connections of each pool: Postgres's, and a SQLite file's readers'. The pool of long
// reads (long_reads.go) has a quarter as many again.
const (
	postgresConnections = 32
	sqliteReaders       = 8
)

// pgConfig is the connection configuration of every connection Parley opens to Postgres.
func pgConfig(dsn string, opts Options) (*pgx.ConnConfig, error) {
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("invalid database URL %q: %v", Redact(dsn), err)
	}
	if cfg.ConnectTimeout == 0 {
		cfg.ConnectTimeout = 5 * time.Second
	}
	if opts.StatementTimeout > 0 {
		cfg.RuntimeParams["statement_timeout"] = strconv.FormatInt(opts.StatementTimeout.Milliseconds(), 10)
	}
	return cfg, nil
}

// openSQLite opens the embedded database in WAL mode with a busy timeout, so that the command
// line can work beside a running server, and with write transactions that take the write lock
// when they begin (BEGIN IMMEDIATE), so that concurrent writers queue instead of failing with
// SQLITE_BUSY half-way through. On a file it opens a second pool of one connection for the
// writer (DB.writes); an in-memory database has one connection, which is both.
func openSQLite(path string) (readers, writer, long *sql.DB, err error) {
	memory := path == ":memory:"
	if !memory {
		if dir := filepath.Dir(path); dir != "" {
			if err := os.MkdirAll(dir, 0o750); err != nil {
				return nil, nil, nil, fmt.Errorf("cannot create the folder for %s: %v", path, err)
			}
		}
	}
	q := url.Values{}
	q.Add("_pragma", "busy_timeout(10000)")
	q.Add("_pragma", "foreign_keys(1)")
	if !memory {
		q.Add("_pragma", "journal_mode(WAL)")
		q.Add("_pragma", "synchronous(NORMAL)")
	}
	q.Set("_txlock", "immediate")
	q.Set("_time_format", "sqlite")
	dsn := "file:" + path + "?" + q.Encode()
	readers, err = sql.Open("sqlite", dsn)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("cannot open %s: %v", path, err)
	}
	if memory {
		// Every connection to :memory: is a database of its own: keep exactly one.
		keepOne(readers)
		return readers, nil, nil, nil
	}
	readers.SetMaxOpenConns(sqliteReaders)
	readers.SetMaxIdleConns(sqliteReaders)
	if writer, err = sql.Open("sqlite", dsn); err != nil {
		_ = readers.Close()
		return nil, nil, nil, fmt.Errorf("cannot open %s: %v", path, err)
	}
	keepOne(writer)
	if long, err = sql.Open("sqlite", dsn); err != nil {
		_ = readers.Close()
		_ = writer.Close()
		return nil, nil, nil, fmt.Errorf("cannot open %s: %v", path, err)
	}
	long.SetMaxOpenConns(sqliteReaders / 4)
	long.SetMaxIdleConns(1)
	return readers, writer, long, nil
}

// keepOne makes pool one connection that stays open for the pool's life.
func keepOne(pool *sql.DB) {
	pool.SetMaxOpenConns(1)
	pool.SetMaxIdleConns(1)
	pool.SetConnMaxIdleTime(0)
	pool.SetConnMaxLifetime(0)
}

// Redact removes a password from a database URL so it can be printed.
func Redact(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.User == nil {
		return raw
	}
	if _, has := u.User.Password(); has {
		u.User = url.UserPassword(u.User.Username(), "xxxxx")
	}
	return u.String()
}
