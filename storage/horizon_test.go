package storage_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"github.com/parleyforum/parley/storage"
	"github.com/parleyforum/parley/storage/storagetest"
)

// holdTransaction starts a transaction on db that holds a transaction id until release is
// called, as a long transaction of another application on the same server does.
func holdTransaction(t *testing.T, db *storage.DB) (release func()) {
	t.Helper()
	held, done := make(chan struct{}), make(chan struct{})
	errs := make(chan error, 1)
	go func() {
		errs <- db.Tx(context.Background(), func(ctx context.Context, tx bun.Tx) error {
			var id int64
			if err := tx.NewRaw("SELECT pg_current_xact_id()::text::bigint").Scan(ctx, &id); err != nil {
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
		t.Fatalf("holding a transaction: %v", err)
	}
	return func() {
		close(done)
		if err := <-errs; err != nil {
			t.Errorf("the held transaction: %v", err)
		}
	}
}

// AwaitHorizon returns at once when nothing older runs, and waits for a transaction that
// began before it, however long, up to its patience.
func TestAwaitHorizon(t *testing.T) {
	ctx := context.Background()
	if err := storagetest.Open(t, storage.SQLite).AwaitHorizon(ctx, time.Millisecond); err != nil {
		t.Fatalf("SQLite: %v", err)
	}

	db := storagetest.OpenIsolated(t, storage.Postgres) // it holds the server's horizon
	if err := db.AwaitHorizon(ctx, 10*time.Second); err != nil {
		t.Fatalf("with nothing running: %v", err)
	}
	release := holdTransaction(t, db)
	if err := db.AwaitHorizon(ctx, 300*time.Millisecond); err == nil {
		t.Fatal("AwaitHorizon returned while an older transaction still ran")
	}
	var released atomic.Bool
	go func() {
		time.Sleep(300 * time.Millisecond)
		released.Store(true)
		release()
	}()
	if err := db.AwaitHorizon(ctx, 30*time.Second); err != nil {
		t.Fatalf("after the older transaction ended: %v", err)
	}
	if !released.Load() {
		t.Fatal("AwaitHorizon returned before the older transaction ended")
	}
}
