package storage_test

import (
	"context"
	"errors"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/parleyforum/parley/migrations"
	"github.com/parleyforum/parley/storage"
	"github.com/parleyforum/parley/storage/storagetest"
)

func TestOpenUnreachablePostgresIsErrUnavailable(t *testing.T) {
	begin := time.Now()
	db, err := storage.Open(context.Background(), "postgres://x:hunter2@127.0.0.1:1/x?sslmode=disable")
	if err == nil {
		db.Close()
		t.Fatal("Open succeeded on port 1")
	}
	if !errors.Is(err, storage.ErrUnavailable) {
		t.Errorf("err = %v, want ErrUnavailable", err)
	}
	if strings.Contains(err.Error(), "hunter2") {
		t.Errorf("the error shows the password: %v", err)
	}
	if took := time.Since(begin); took > 10*time.Second {
		t.Errorf("Open took %v to give up on a refused connection", took)
	}
}

func TestOpenRefusesInvalidURLs(t *testing.T) {
	for _, raw := range []string{
		"",
		"parley.db",
		"mysql://u@localhost/parley",
		"sqlite:",
		"sqlite://",
		"postgres://%zz",
		"postgres://u@localhost:notaport/parley",
		"postgres://u@localhost/parley?sslmode=sometimes",
	} {
		t.Run(raw, func(t *testing.T) {
			db, err := storage.Open(context.Background(), raw)
			if err == nil {
				db.Close()
				t.Fatalf("Open(%q) succeeded", raw)
			}
			if !strings.Contains(err.Error(), "invalid database URL") {
				t.Errorf("err = %v, want it to say invalid database URL", err)
			}
			if errors.Is(err, storage.ErrUnavailable) {
				t.Errorf("err = %v is ErrUnavailable: a bad URL does not get better by retrying", err)
			}
		})
	}
}

func TestOpenSQLiteRelativePathCreatesItsFolder(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	db, err := storage.Open(context.Background(), "sqlite:parley-data/nested/parley.db")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if db.Kind() != storage.SQLite {
		t.Errorf("Kind = %q, want sqlite", db.Kind())
	}
	if err := db.Healthy(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "parley-data", "nested", "parley.db")); err != nil {
		t.Errorf("the database file is not in the folder relative to the working folder: %v", err)
	}
}

func TestOpenSQLiteAbsolutePath(t *testing.T) {
	path := filepath.Join(t.TempDir(), "abs", "parley.db")
	for _, raw := range []string{"sqlite:" + path, "sqlite://" + path} {
		db, err := storage.Open(context.Background(), raw)
		if err != nil {
			t.Fatalf("Open(%q): %v", raw, err)
		}
		db.Close()
		if _, err := os.Stat(path); err != nil {
			t.Errorf("Open(%q) did not create %s: %v", raw, path, err)
		}
	}
}

// TestSQLiteConnectionSettings checks the settings on several connections at once: they are
// per connection, and the pool opens new ones at any time.
func TestSQLiteConnectionSettings(t *testing.T) {
	ctx := context.Background()
	db := storagetest.Open(t, storage.SQLite)
	for i := range 3 {
		conn, err := db.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		for pragma, want := range map[string]string{
			"journal_mode": "wal", // readers beside a writer: the command line beside the server
			"busy_timeout": "10000",
			"foreign_keys": "1",
			"synchronous":  "1", // NORMAL: safe with WAL, no fsync per commit
		} {
			var got string
			if err := conn.QueryRowContext(ctx, "PRAGMA "+pragma).Scan(&got); err != nil {
				t.Fatal(err)
			}
			if got != want {
				t.Errorf("connection %d: PRAGMA %s = %s, want %s", i, pragma, got, want)
			}
		}
	}
}

func TestSQLiteInMemory(t *testing.T) {
	ctx := context.Background()
	db, err := storage.Open(ctx, "sqlite::memory:")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	// Every connection to :memory: is its own database: the migrated tables must still be there
	// for the next statement.
	if _, err := migrations.Up(ctx, db); err != nil {
		t.Fatal(err)
	}
	if _, err := db.NewInsert().Model(&storage.Setting{Key: "k", Value: "v"}).Exec(ctx); err != nil {
		t.Fatalf("insert after migrating :memory:: %v", err)
	}
}

func TestURLHidesThePassword(t *testing.T) {
	u, err := url.Parse(storagetest.NewURL(t, storage.Postgres))
	if err != nil {
		t.Fatal(err)
	}
	u.User = url.UserPassword(u.User.Username(), "hunter2") // the test server trusts everyone
	db, err := storage.Open(context.Background(), u.String())
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if db.Kind() != storage.Postgres {
		t.Errorf("Kind = %q, want postgres", db.Kind())
	}
	if strings.Contains(db.URL(), "hunter2") || !strings.Contains(db.URL(), u.Host) {
		t.Errorf("URL() = %s, want the address without the password", db.URL())
	}
}

func TestHealthyAfterClose(t *testing.T) {
	for _, kind := range storagetest.Kinds() {
		t.Run(string(kind), func(t *testing.T) {
			ctx := context.Background()
			db, err := storage.Open(ctx, storagetest.NewURL(t, kind))
			if err != nil {
				t.Fatal(err)
			}
			if err := db.Healthy(ctx); err != nil {
				t.Fatalf("Healthy on an open database: %v", err)
			}
			db.Close()
			if err := db.Healthy(ctx); err == nil {
				t.Error("Healthy on a closed database reports no error")
			}
		})
	}
}
