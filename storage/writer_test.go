package storage_test

import (
	"context"
	"testing"

	"github.com/uptrace/bun"

	"github.com/parleyforum/parley/storage"
	"github.com/parleyforum/parley/storage/storagetest"
)

// On a SQLite file every write — a transaction, an artifact's — runs on the writer's one
// connection, beside the readers' pool: a connection that alone writes keeps its page cache
// from one write to the next. Reads do not take it, and a read beside a write goes on.
func TestSQLiteWritesTakeTheWritersOwnConnection(t *testing.T) {
	ctx := context.Background()
	db := storagetest.Open(t, storage.SQLite)
	writer := db.WriterPool()
	if writer == nil {
		t.Fatal("a SQLite file has no writer's pool of its own")
	}
	if got := writer.Stats().MaxOpenConnections; got != 1 {
		t.Fatalf("the writer's pool opens up to %d connections, want 1", got)
	}
	onTheWriter := func(what string) {
		t.Helper()
		if in := writer.Stats().InUse; in != 1 {
			t.Errorf("%s: the writer's connection in use %d times, want 1", what, in)
		}
		if in := db.DB.DB.Stats().InUse; in != 0 {
			t.Errorf("%s: %d of the readers' connections in use, want none", what, in)
		}
		// A read beside the write goes to the readers' pool and is not held up by it.
		var n int
		if err := db.NewRaw("SELECT count(*) FROM threads").Scan(ctx, &n); err != nil {
			t.Errorf("%s: a read beside it: %v", what, err)
		}
	}
	for i := range 3 {
		if err := db.Tx(ctx, func(ctx context.Context, tx bun.Tx) error {
			onTheWriter("a transaction")
			_, err := tx.ExecContext(ctx, "INSERT INTO counters (name, value) VALUES (?, 1)", "writer-probe-"+string(rune('a'+i)))
			return err
		}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := db.PutArtifact(ctx, &storage.Artifact{Ref: "sha256:writer-probe", Size: 5, MediaType: "text/plain",
		Content: []byte("probe"), Identity: "writer", CreatedAt: storage.Now()}, roomy, func(context.Context, *storage.Forum) error {
		onTheWriter("an artifact's write")
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if open := writer.Stats().OpenConnections; open != 1 {
		t.Errorf("after the writes the writer's pool holds %d connections, want its one", open)
	}
}

// Postgres and an in-memory SQLite database write on their one pool.
func TestOnePoolWhereTheWriterHasNoneOfItsOwn(t *testing.T) {
	db := storagetest.Open(t, storage.Postgres)
	if db.WriterPool() != nil {
		t.Error("Postgres has a writer's pool of its own")
	}
	mem, err := storage.Open(context.Background(), "sqlite::memory:")
	if err != nil {
		t.Fatal(err)
	}
	defer mem.Close()
	if mem.WriterPool() != nil {
		t.Error("an in-memory SQLite database has a writer's pool of its own")
	}
}
