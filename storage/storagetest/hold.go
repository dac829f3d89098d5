package storagetest

import (
	"context"
	"sync"
	"testing"

	"github.com/uptrace/bun"

	"github.com/parleyforum/parley/storage"
)

// HoldTransaction starts a transaction on db that holds a transaction id until release is
// called, as a long transaction of another instance or a maintenance script does: on Postgres
// it holds back the read horizon of the inbox and the feed of db's database (see
// storage.horizonSQL), and of no other database, so no other test on the shared server.
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
