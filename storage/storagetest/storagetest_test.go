package storagetest

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/parleyforum/parley/migrations"
	"github.com/parleyforum/parley/storage"
)

func TestEachRunsEveryKindAsNamedSubtests(t *testing.T) {
	var names []string
	var kinds []storage.Kind
	Each(t, func(t *testing.T, db *storage.DB) {
		names = append(names, t.Name())
		kinds = append(kinds, db.Kind())
	})
	wantNames := []string{t.Name() + "/sqlite", t.Name() + "/postgres"}
	if diff := cmp.Diff(wantNames, names); diff != "" {
		t.Errorf("subtests (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(Kinds(), kinds); diff != "" {
		t.Errorf("kinds (-want +got):\n%s", diff)
	}
}

func TestOpenIsMigratedAndFresh(t *testing.T) {
	ctx := context.Background()
	for _, kind := range Kinds() {
		t.Run(string(kind), func(t *testing.T) {
			first, second := Open(t, kind), Open(t, kind)
			for _, db := range []*storage.DB{first, second} {
				pending, err := migrations.Pending(ctx, db)
				if err != nil || pending != 0 {
					t.Fatalf("Pending = %d, %v; want 0 migrations pending", pending, err)
				}
			}
			if first.URL() == second.URL() {
				t.Fatalf("two Opens returned the same database %s", first.URL())
			}
			if _, err := first.NewInsert().Model(&storage.Setting{Key: "probe", Value: "1"}).Exec(ctx); err != nil {
				t.Fatal(err)
			}
			n, err := second.NewSelect().Model((*storage.Setting)(nil)).Where("key = ?", "probe").Count(ctx)
			if err != nil || n != 0 {
				t.Errorf("a row written to one database is in another: count %d, %v", n, err)
			}
		})
	}
}

func TestNewURLIsEmpty(t *testing.T) {
	ctx := context.Background()
	for _, kind := range Kinds() {
		t.Run(string(kind), func(t *testing.T) {
			db := open(t, NewURL(t, kind))
			var tables int
			q := "SELECT count(*) FROM sqlite_master WHERE type = 'table'"
			if kind == storage.Postgres {
				q = "SELECT count(*) FROM information_schema.tables WHERE table_schema = 'public'"
			}
			if err := db.NewRaw(q).Scan(ctx, &tables); err != nil {
				t.Fatal(err)
			}
			if tables != 0 {
				t.Errorf("the new database has %d tables, want none", tables)
			}
		})
	}
}

func TestSQLiteIsAFileInTheTestsFolder(t *testing.T) {
	raw := NewURL(t, storage.SQLite)
	path := strings.TrimPrefix(raw, "sqlite:")
	if path == raw || strings.Contains(path, ":memory:") {
		t.Fatalf("NewURL = %q, want sqlite:PATH of a file", raw)
	}
	db := open(t, raw)
	if _, err := os.Stat(path); err != nil {
		t.Errorf("after opening %s: %v", db.URL(), err)
	}
}

func TestPostgresDatabasesAreDroppedAfterTheTest(t *testing.T) {
	var names []string
	t.Run("uses", func(t *testing.T) {
		for _, raw := range []string{NewURL(t, storage.Postgres), Open(t, storage.Postgres).URL()} {
			u, err := url.Parse(raw)
			if err != nil {
				t.Fatal(err)
			}
			names = append(names, strings.TrimPrefix(u.Path, "/"))
		}
		// Left open on purpose: the drop must end the connections itself.
		leaked, err := storage.Open(context.Background(), Open(t, storage.Postgres).URL())
		if err != nil {
			t.Fatal(err)
		}
		u, _ := url.Parse(leaked.URL())
		names = append(names, strings.TrimPrefix(u.Path, "/"))
	})
	for _, name := range names {
		if !strings.HasPrefix(name, "parley_test_") {
			t.Errorf("database %q is not named parley_test_…", name)
		}
		var exists bool
		err := pgServer.admin.QueryRow("SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)", name).Scan(&exists)
		if err != nil {
			t.Fatal(err)
		}
		if exists {
			t.Errorf("database %s still exists after its test ended", name)
		}
	}
}

// Parallel tests share the process's server and template database.
func TestParallelTestsGetTheirOwnDatabases(t *testing.T) {
	var mu sync.Mutex
	seen := map[string]bool{}
	for i := range 6 {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			t.Parallel()
			Each(t, func(t *testing.T, db *storage.DB) {
				t.Parallel()
				mu.Lock()
				defer mu.Unlock()
				if seen[db.URL()] {
					t.Errorf("database %s handed out twice", db.URL())
				}
				seen[db.URL()] = true
			})
		})
	}
}

// BenchmarkNewDatabase measures what every test pays for its database: copy the template,
// open, close, remove; and, for SQLite, what migrating a new file instead would cost.
func BenchmarkNewDatabase(b *testing.B) {
	ctx := context.Background()
	b.Run("sqlite", func(b *testing.B) {
		for b.Loop() {
			db, err := storage.Open(ctx, migratedSQLiteURL(b))
			if err != nil {
				b.Fatal(err)
			}
			_ = db.Close()
		}
	})
	b.Run("sqlite-migrating", func(b *testing.B) {
		for b.Loop() {
			dir, err := os.MkdirTemp("", "parley-bench-")
			if err != nil {
				b.Fatal(err)
			}
			db, err := storage.Open(ctx, "sqlite:"+filepath.Join(dir, "parley.db"))
			if err != nil {
				b.Fatal(err)
			}
			if _, err := migrations.Up(ctx, db); err != nil {
				b.Fatal(err)
			}
			_ = db.Close()
			_ = os.RemoveAll(dir)
		}
	})
	b.Run("postgres", func(b *testing.B) {
		s := postgres(b)
		template, err := s.migratedTemplate()
		if err != nil {
			b.Fatal(err)
		}
		for b.Loop() {
			name, err := s.create(ctx, "parley_test_", template)
			if err != nil {
				b.Fatal(err)
			}
			db, err := storage.Open(ctx, s.url(name))
			if err != nil {
				b.Fatal(err)
			}
			_ = db.Close()
			if err := s.drop(ctx, name); err != nil {
				b.Fatal(err)
			}
		}
	})
}
