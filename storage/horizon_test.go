package storage_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/parleyforum/parley/storage"
	"github.com/parleyforum/parley/storage/storagetest"
)

// AwaitHorizon returns at once when nothing older runs, and waits for a transaction that
// began before it, however long, up to its patience.
func TestAwaitHorizon(t *testing.T) {
	ctx := context.Background()
	if err := storagetest.Open(t, storage.SQLite).AwaitHorizon(ctx, time.Millisecond); err != nil {
		t.Fatalf("SQLite: %v", err)
	}

	db := storagetest.Open(t, storage.Postgres)
	if err := db.AwaitHorizon(ctx, 10*time.Second); err != nil {
		t.Fatalf("with nothing running: %v", err)
	}
	release := storagetest.HoldTransaction(t, db)
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

// A transaction running in another database of the same Postgres server cannot write here, so
// it holds back neither the horizon nor AwaitHorizon: one Parley is not stalled by another
// application's long transaction on a shared server.
func TestHorizonPassesOverOtherDatabases(t *testing.T) {
	ctx := context.Background()
	db, other := storagetest.Open(t, storage.Postgres), storagetest.Open(t, storage.Postgres)
	release := storagetest.HoldTransaction(t, other)
	defer release()
	if err := db.AwaitHorizon(ctx, 10*time.Second); err != nil {
		t.Fatalf("held back by the other database's transaction: %v", err)
	}
	if err := other.AwaitHorizon(ctx, 300*time.Millisecond); err == nil {
		t.Fatal("the other database's own horizon passed its running transaction")
	}
}
