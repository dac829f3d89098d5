package storage_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"github.com/parleyforum/parley/storage"
	"github.com/parleyforum/parley/storage/storagetest"
)

// The server and the command line open the same SQLite file as two *storage.DB. Their write
// transactions must queue (BEGIN IMMEDIATE and the busy timeout), not fail with SQLITE_BUSY.

// openTwice returns two *storage.DB on one migrated SQLite file with a counter named test.
func openTwice(t *testing.T) (*storage.DB, *storage.DB) {
	t.Helper()
	first := storagetest.Open(t, storage.SQLite)
	second, err := storage.Open(context.Background(), first.URL())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { second.Close() })
	_, err = first.NewRaw("INSERT INTO counters (name, value) VALUES ('test', 0)").Exec(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return first, second
}

// increment reads the counter and writes it back plus one in one transaction: with deferred
// transactions, two of these at once deadlock on upgrading their read lock, and SQLite
// answers SQLITE_BUSY at once, without waiting for the busy timeout.
func increment(ctx context.Context, db *storage.DB, hold time.Duration) error {
	return db.Tx(ctx, func(ctx context.Context, tx bun.Tx) error {
		var v int64
		if err := tx.NewRaw("SELECT value FROM counters WHERE name = 'test'").Scan(ctx, &v); err != nil {
			return err
		}
		time.Sleep(hold)
		_, err := tx.NewRaw("UPDATE counters SET value = ? WHERE name = 'test'", v+1).Exec(ctx)
		return err
	})
}

func counter(t *testing.T, db *storage.DB) int64 {
	t.Helper()
	var v int64
	if err := db.NewRaw("SELECT value FROM counters WHERE name = 'test'").Scan(context.Background(), &v); err != nil {
		t.Fatal(err)
	}
	return v
}

func TestSQLiteConcurrentWritersFromTwoDBs(t *testing.T) {
	first, second := openTwice(t)
	const perWorker, workersPerDB = 25, 4
	ctx := context.Background()
	var wg sync.WaitGroup
	errs := make(chan error, 2*workersPerDB*perWorker)
	for _, db := range []*storage.DB{first, second} {
		for range workersPerDB {
			wg.Go(func() {
				for range perWorker {
					if err := increment(ctx, db, 0); err != nil {
						errs <- err
					}
				}
			})
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("concurrent write failed: %v", err)
	}
	if got, want := counter(t, first), int64(2*workersPerDB*perWorker); got != want {
		t.Errorf("counter = %d after %d increments: writes were lost", got, want)
	}
}

func TestSQLiteWriterWaitsForALongTransaction(t *testing.T) {
	first, second := openTwice(t)
	ctx := context.Background()
	holding := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		done <- first.Tx(ctx, func(ctx context.Context, tx bun.Tx) error {
			if _, err := tx.NewRaw("UPDATE counters SET value = value + 1 WHERE name = 'test'").Exec(ctx); err != nil {
				return err
			}
			close(holding)
			time.Sleep(500 * time.Millisecond) // well inside the busy timeout
			return nil
		})
	}()
	<-holding
	if err := increment(ctx, second, 0); err != nil {
		t.Errorf("a write while another DB holds the write lock: %v, want it to wait", err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if got := counter(t, first); got != 2 {
		t.Errorf("counter = %d, want 2", got)
	}
}
