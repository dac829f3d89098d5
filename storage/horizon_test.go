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

	db := storagetest.OpenIsolated(t, storage.Postgres) // it holds the server's horizon
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
