package storage_test

import (
	"context"
	"errors"
	"net"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"github.com/parleyforum/parley/storage"
	"github.com/parleyforum/parley/storage/storagetest"
)

// A server that accepts connections and never answers is an outage: the connect runs into
// the caller's deadline and that is ErrUnavailable, not a bare deadline error (which the
// operation layer would take for a fault of the server).
func TestSilentServerIsErrUnavailable(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			t.Cleanup(func() { c.Close() }) // held open, never answered
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	db, err := storage.Open(ctx, "postgres://x@"+ln.Addr().String()+"/x?sslmode=disable")
	if err == nil {
		db.Close()
		t.Fatal("Open succeeded against a server that never answers")
	}
	if !errors.Is(err, storage.ErrUnavailable) {
		t.Errorf("err = %v, want ErrUnavailable", err)
	}
}

// A hung database (connections open, nothing answers) ends a query at its context's
// deadline with ErrUnavailable, and a statement that runs longer than the statement
// timeout is ended by Postgres itself, also ErrUnavailable. Migrations lift the timeout.
func TestHungPostgresIsErrUnavailable(t *testing.T) {
	ctx := context.Background()
	db, p := storagetest.OpenProxied(t, storage.Options{StatementTimeout: 250 * time.Millisecond})
	var timeout string
	if err := db.NewRaw("SHOW statement_timeout").Scan(ctx, &timeout); err != nil || timeout != "250ms" {
		t.Fatalf("statement_timeout = %q, %v; want 250ms", timeout, err)
	}
	err := db.Tx(ctx, func(ctx context.Context, tx bun.Tx) error {
		_, err := tx.ExecContext(ctx, "SELECT pg_sleep(2)")
		return err
	})
	if !errors.Is(err, storage.ErrUnavailable) {
		t.Errorf("a statement over the statement timeout: %v, want ErrUnavailable", err)
	}

	p.Freeze()
	for range 3 { // the connections in the pool, then new ones that hang in their connect
		ctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
		err := db.Tx(ctx, func(ctx context.Context, tx bun.Tx) error {
			_, err := tx.ExecContext(ctx, "SELECT 1")
			return err
		})
		cancel()
		if !errors.Is(err, storage.ErrUnavailable) {
			t.Errorf("a query to a hung database: %v, want ErrUnavailable", err)
		}
	}
	p.Thaw()
	if err := db.Healthy(ctx); err != nil {
		t.Errorf("after the database answers again: %v", err)
	}
}

// A snapshot whose request's deadline passes between two of its reads is unavailable: the
// transaction database/sql rolled back under it says only sql.ErrTxDone, which is no fault of
// the server's (a 500), but the database not answering in time.
func TestSnapshotPastItsDeadlineIsUnavailable(t *testing.T) {
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		defer cancel()
		err := db.Snapshot(ctx, func(ctx context.Context, f *storage.Forum) error {
			if _, err := f.SnapshotTime(ctx); err != nil {
				return err
			}
			<-ctx.Done()
			time.Sleep(20 * time.Millisecond) // for database/sql to roll the transaction back
			// A read of the stream that outlives the request's deadline (an export's writer
			// reads on after its answer began) finds the transaction gone.
			_, err := f.SnapshotTime(context.WithoutCancel(ctx))
			return err
		})
		// On SQLite the snapshot is a connection of its own, which the deadline does not
		// end: the late read is answered. On Postgres it is refused, as unavailable.
		if err != nil && !errors.Is(err, storage.ErrUnavailable) {
			t.Fatalf("a snapshot read past its deadline: %v, want unavailable or an answer", err)
		}
	})
}
