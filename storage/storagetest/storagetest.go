// Package storagetest gives every test in Parley its databases: a fresh, migrated database of
// each kind per test, so that the same test runs on SQLite and on Postgres and no test sees
// another's rows.
//
// SQLite databases are files in the test's temporary folder (files rather than :memory:, so
// that several connections, and several *storage.DB, share one database as in production).
// Postgres databases are created per test on one server per test process and dropped when the
// test ends: the server named by PARLEY_TEST_POSTGRES, else a throwaway cluster started on
// first use and stopped by Main. Postgres is never skipped: without one the tests fail.
//
// Every package that uses storagetest calls Main from its TestMain:
//
//	func TestMain(m *testing.M) { storagetest.Main(m) }
package storagetest

import (
	"context"
	"testing"
	"time"

	"github.com/parleyforum/parley/storage"
)

// EnvPostgres names a Postgres server (postgres://user@host:port/db?sslmode=disable) to create
// the test databases on, instead of starting one. The user must be allowed to create databases;
// the database in the URL is only used to send CREATE DATABASE and DROP DATABASE from.
const EnvPostgres = "PARLEY_TEST_POSTGRES"

// Kinds lists every database kind Parley runs on, in the order Each runs them.
func Kinds() []storage.Kind { return []storage.Kind{storage.SQLite, storage.Postgres} }

// Each runs fn once per kind, as subtests named after the kind ("sqlite", "postgres"), each
// with a fresh, fully migrated database that is closed and removed when the subtest ends. fn
// may call t.Parallel.
func Each(t *testing.T, fn func(t *testing.T, db *storage.DB)) {
	t.Helper()
	for _, kind := range Kinds() {
		t.Run(string(kind), func(t *testing.T) {
			fn(t, Open(t, kind))
		})
	}
}

// Open returns a fresh, fully migrated database of the kind, closed and removed when the test
// ends.
func Open(t testing.TB, kind storage.Kind) *storage.DB {
	t.Helper()
	switch kind {
	case storage.SQLite:
		requireMain(t)
		return open(t, migratedSQLiteURL(t))
	case storage.Postgres:
		return open(t, postgres(t).migratedDatabase(t))
	}
	t.Fatalf("storagetest: unknown database kind %q", kind)
	return nil
}

// NewURL returns the URL of a fresh, empty database of the kind, with no migration applied:
// for tests of the migrations, and for tests that hand the URL to a parley process (--db).
// The database is removed when the test ends.
func NewURL(t testing.TB, kind storage.Kind) string {
	t.Helper()
	requireMain(t)
	switch kind {
	case storage.SQLite:
		return sqliteURL(t)
	case storage.Postgres:
		return postgres(t).emptyDatabase(t)
	}
	t.Fatalf("storagetest: unknown database kind %q", kind)
	return ""
}

func open(t testing.TB, rawURL string) *storage.DB {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	db, err := storage.Open(ctx, rawURL)
	if err != nil {
		t.Fatalf("storagetest: %v", err)
	}
	t.Cleanup(func() {
		if err := db.Close(); err != nil {
			t.Errorf("storagetest: closing %s: %v", db.URL(), err)
		}
	})
	return db
}
