package storagetest

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/uptrace/bun"

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

// HoldTransaction starts a transaction on db that holds a transaction id until release is
// called, as a long transaction of another application on the same server does: on Postgres
// it holds the inbox's and the feed's read horizon back. Give it a database of OpenIsolated,
// so that it holds back no other test's reads.
func HoldTransaction(t testing.TB, db *storage.DB) (release func()) {
	t.Helper()
	held, done := make(chan struct{}), make(chan struct{})
	errs := make(chan error, 1)
	go func() {
		errs <- db.Tx(context.Background(), func(ctx context.Context, tx bun.Tx) error {
			if _, err := tx.ExecContext(ctx, "SELECT pg_current_xact_id()"); err != nil {
				return err
			}
			close(held)
			<-done
			return nil
		})
	}()
	select {
	case <-held:
	case err := <-errs:
		t.Fatalf("storagetest: holding a transaction: %v", err)
	}
	var once sync.Once
	release = func() {
		once.Do(func() {
			close(done)
			if err := <-errs; err != nil {
				t.Errorf("storagetest: the held transaction: %v", err)
			}
		})
	}
	t.Cleanup(release) // before the database closes, if the test has not released it
	return release
}
