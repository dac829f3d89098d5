package storage_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"github.com/parleyforum/parley/storage"
	"github.com/parleyforum/parley/storage/storagetest"
)

// probeRows counts the rows of the probe table.
func probeRows(t *testing.T, db *storage.DB) int {
	t.Helper()
	var n int
	if err := db.NewRaw("SELECT count(*) FROM tx_probe").Scan(context.Background(), &n); err != nil {
		t.Fatal(err)
	}
	return n
}

// A write is decided at its commit. Work that runs past the deadline is rolled back and is
// ErrUnavailable, on both databases; nothing of it is written.
func TestTxPastItsDeadlineIsRolledBack(t *testing.T) {
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		if _, err := db.ExecContext(context.Background(), "CREATE TABLE tx_probe (n integer)"); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		defer cancel()
		err := db.Tx(ctx, func(ctx context.Context, tx bun.Tx) error {
			if _, err := tx.ExecContext(ctx, "INSERT INTO tx_probe VALUES (1)"); err != nil {
				return err
			}
			<-ctx.Done() // work that outlives the deadline, with no statement to fail
			return nil
		})
		if !errors.Is(err, storage.ErrUnavailable) {
			t.Errorf("a transaction past its deadline: %v, want ErrUnavailable", err)
		}
		if n := probeRows(t, db); n != 0 {
			t.Errorf("a transaction past its deadline wrote %d rows", n)
		}
	})
}

// A commit sent before the deadline is waited for even when its answer comes after it: the
// write the database committed is reported committed, not as an outage (which a client
// would take for "nothing was written"). One whose answer does not come within the grace is
// ended.
func TestTxCommitInFlightOutlivesTheDeadline(t *testing.T) {
	db, p := storagetest.OpenProxied(t, storage.Options{})
	if _, err := db.ExecContext(context.Background(), "CREATE TABLE tx_probe (n integer)"); err != nil {
		t.Fatal(err)
	}
	const deadline = 300 * time.Millisecond
	ctx, cancel := context.WithTimeout(context.Background(), deadline)
	defer cancel()
	start := time.Now()
	err := db.Tx(ctx, func(ctx context.Context, tx bun.Tx) error {
		if _, err := tx.ExecContext(ctx, "INSERT INTO tx_probe VALUES (1)"); err != nil {
			return err
		}
		// The database stops answering as the commit goes out, and answers again after the
		// deadline, within the grace.
		p.Freeze()
		time.AfterFunc(time.Until(start.Add(deadline+storage.CommitGrace/2)), p.Thaw)
		return nil
	})
	if err != nil {
		t.Fatalf("a commit answered after the deadline, within the grace: %v", err)
	}
	if took := time.Since(start); took < deadline {
		t.Fatalf("the commit was answered in %v, before the deadline: the test proves nothing", took)
	}
	if n := probeRows(t, db); n != 1 {
		t.Errorf("the committed transaction left %d rows, want 1", n)
	}

	// No answer within the grace: the commit is ended, as an outage.
	ctx2, cancel2 := context.WithTimeout(context.Background(), deadline)
	defer cancel2()
	start = time.Now()
	err = db.Tx(ctx2, func(ctx context.Context, tx bun.Tx) error {
		if _, err := tx.ExecContext(ctx, "INSERT INTO tx_probe VALUES (2)"); err != nil {
			return err
		}
		p.Freeze()
		return nil
	})
	took := time.Since(start)
	p.Thaw()
	if !errors.Is(err, storage.ErrUnavailable) {
		t.Errorf("a commit never answered: %v, want ErrUnavailable", err)
	}
	if took > storage.CommitGrace+deadline+time.Second {
		t.Errorf("a commit never answered took %v to give up", took)
	}
}
