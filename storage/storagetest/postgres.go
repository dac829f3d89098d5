package storagetest

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/parleyforum/parley/migrations"
	"github.com/parleyforum/parley/storage"
	"github.com/parleyforum/parley/storage/storagetest/pgcluster"
)

// server is the Postgres server the tests of this process create their databases on.
type server struct {
	base    url.URL            // the server; its database is the one DDL is sent from
	admin   *sql.DB            // connected to base, for CREATE and DROP DATABASE
	cluster *pgcluster.Cluster // the throwaway cluster, nil when EnvPostgres named the server

	// template is a migrated database made once per process: copying it (CREATE DATABASE …
	// TEMPLATE) is much faster than migrating every test's database.
	templateOnce sync.Once
	template     string
	templateErr  error
}

var (
	pgOnce   sync.Once
	pgServer *server
	pgErr    error
)

// postgres returns this process's server, finding or starting it on first use.
func postgres(t testing.TB) *server {
	t.Helper()
	requireMain(t)
	pgOnce.Do(func() { pgServer, pgErr = startServer() })
	if pgErr != nil {
		t.Fatalf("storagetest: %v", pgErr)
	}
	return pgServer
}

func startServer() (*server, error) {
	if raw := os.Getenv(EnvPostgres); raw != "" {
		if !strings.HasPrefix(raw, "postgres://") && !strings.HasPrefix(raw, "postgresql://") {
			return nil, fmt.Errorf("%s=%s is not a postgres:// URL", EnvPostgres, storage.Redact(raw))
		}
		s, err := connect(raw)
		if err != nil {
			return nil, fmt.Errorf("%s=%s: %v", EnvPostgres, storage.Redact(raw), err)
		}
		return s, nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cluster, err := pgcluster.Start(ctx)
	if errors.Is(err, pgcluster.ErrNotInstalled) {
		return nil, fmt.Errorf("no Postgres found: install postgresql or set %s (%v)", EnvPostgres, err)
	}
	if err != nil {
		return nil, fmt.Errorf("cannot start a Postgres for the tests (or set %s to use a running one): %v", EnvPostgres, err)
	}
	stopOnSignal(cluster)
	s, err := connect(cluster.URL("postgres"))
	if err != nil {
		_ = cluster.Stop()
		return nil, err
	}
	s.cluster = cluster
	return s, nil
}

func connect(raw string) (*server, error) {
	base, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("invalid URL: %v", err)
	}
	cfg, err := pgx.ParseConfig(raw)
	if err != nil {
		return nil, fmt.Errorf("invalid URL: %v", err)
	}
	admin := stdlib.OpenDB(*cfg)
	// Parallel tests create databases at once; a few connections are enough to not queue long.
	admin.SetMaxOpenConns(4)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := admin.PingContext(ctx); err != nil {
		_ = admin.Close()
		return nil, fmt.Errorf("cannot connect: %v", err)
	}
	return &server{base: *base, admin: admin}, nil
}

// emptyDatabase creates a database with no tables and returns its URL.
func (s *server) emptyDatabase(t testing.TB) string {
	t.Helper()
	// template0 is empty by definition; template1, the default, may hold whatever the owner
	// of a shared server put there.
	return s.databaseFrom(t, "template0")
}

// migratedDatabase creates a database with every migration applied and returns its URL.
func (s *server) migratedDatabase(t testing.TB) string {
	t.Helper()
	template, err := s.migratedTemplate()
	if err != nil {
		t.Fatalf("storagetest: %v", err)
	}
	return s.databaseFrom(t, template)
}

func (s *server) migratedTemplate() (string, error) {
	s.templateOnce.Do(func() { s.template, s.templateErr = s.makeTemplate() })
	return s.template, s.templateErr
}

func (s *server) databaseFrom(t testing.TB, template string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	name, err := s.create(ctx, "parley_test_", template)
	if err != nil {
		t.Fatalf("storagetest: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := s.drop(ctx, name); err != nil {
			t.Errorf("storagetest: %v", err)
		}
	})
	return s.url(name)
}

func (s *server) makeTemplate() (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	name, err := s.create(ctx, "parley_template_", "template0")
	if err != nil {
		return "", err
	}
	err = func() error {
		db, err := storage.Open(ctx, s.url(name))
		if err != nil {
			return err
		}
		// Closed before it is copied: Postgres refuses to copy a database others are connected to.
		defer db.Close()
		if _, err := migrations.Up(ctx, db); err != nil {
			return fmt.Errorf("migrating the template database: %w", err)
		}
		return nil
	}()
	if err != nil {
		_ = s.drop(ctx, name)
		return "", err
	}
	return name, nil
}

func (s *server) create(ctx context.Context, prefix, template string) (string, error) {
	name := prefix + randomSuffix()
	q := "CREATE DATABASE " + pgx.Identifier{name}.Sanitize() + " TEMPLATE " + pgx.Identifier{template}.Sanitize()
	if _, err := s.admin.ExecContext(ctx, q); err != nil {
		return "", fmt.Errorf("cannot create database %s on %s: %v", name, storage.Redact(s.base.String()), err)
	}
	return name, nil
}

// drop removes a database even if connections to it are still open (a parley process that a
// test started, a *storage.DB a test forgot to close): WITH (FORCE) needs Postgres 13 or newer.
func (s *server) drop(ctx context.Context, name string) error {
	q := "DROP DATABASE IF EXISTS " + pgx.Identifier{name}.Sanitize() + " WITH (FORCE)"
	if _, err := s.admin.ExecContext(ctx, q); err != nil {
		return fmt.Errorf("cannot drop database %s: %v", name, err)
	}
	return nil
}

// url is the address of one database on the server, with the base URL's user, password and
// parameters.
func (s *server) url(database string) string {
	u := s.base
	u.Path = "/" + database
	u.RawPath = ""
	return u.String()
}

// close drops the template, disconnects, and stops the cluster if this process started it.
func (s *server) close() error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var errs []error
	if s.template != "" {
		errs = append(errs, s.drop(ctx, s.template))
	}
	errs = append(errs, s.admin.Close())
	if s.cluster != nil {
		errs = append(errs, s.cluster.Stop())
	}
	return errors.Join(errs...)
}

// randomSuffix keeps the databases of concurrent tests, and of test processes sharing one
// server, apart.
func randomSuffix() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b) // never fails (crypto/rand)
	return hex.EncodeToString(b)
}
