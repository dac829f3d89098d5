package storagetest

import (
	"context"
	"testing"
	"time"

	"github.com/parleyforum/parley/migrations"
	"github.com/parleyforum/parley/storage"
	"github.com/parleyforum/parley/storage/storagetest/pgcluster"
)

// OpenIsolated is Open, except that a Postgres database gets a server of its own, started for
// the test and stopped when it ends. A test that holds a write transaction open on purpose
// needs one: the inbox shows changes only up to the oldest write still running on the whole
// server (see storage.horizonSQL), so on the shared server such a test would hold back the
// inbox reads of every other test. SQLite databases are always isolated.
func OpenIsolated(t testing.TB, kind storage.Kind) *storage.DB {
	t.Helper()
	if kind != storage.Postgres {
		return Open(t, kind)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cluster, err := pgcluster.Start(ctx)
	if err != nil {
		t.Fatalf("storagetest: starting a Postgres of the test's own: %v", err)
	}
	t.Cleanup(func() {
		if err := cluster.Stop(); err != nil {
			t.Errorf("storagetest: stopping the test's own Postgres: %v", err)
		}
	})
	db := open(t, cluster.URL("postgres"))
	if _, err := migrations.Up(ctx, db); err != nil {
		t.Fatalf("storagetest: migrating the test's own Postgres: %v", err)
	}
	return db
}

// EachIsolated is Each with OpenIsolated's databases.
func EachIsolated(t *testing.T, fn func(t *testing.T, db *storage.DB)) {
	t.Helper()
	for _, kind := range Kinds() {
		t.Run(string(kind), func(t *testing.T) {
			fn(t, OpenIsolated(t, kind))
		})
	}
}
