package migrations_test

import (
	"context"
	"os"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/uptrace/bun"

	"github.com/parleyforum/parley/migrations"
	"github.com/parleyforum/parley/storage"
	"github.com/parleyforum/parley/storage/storagetest"
)

// eachEmpty runs fn on an empty database of every kind, with no migration applied.
func eachEmpty(t *testing.T, fn func(t *testing.T, rawURL string, db *storage.DB)) {
	for _, kind := range storagetest.Kinds() {
		t.Run(string(kind), func(t *testing.T) {
			rawURL := storagetest.NewURL(t, kind)
			db, err := storage.Open(context.Background(), rawURL)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { db.Close() })
			fn(t, rawURL, db)
		})
	}
}

func versions(ms []migrations.Migration) []string {
	var out []string
	for _, m := range ms {
		out = append(out, m.Version)
	}
	return out
}

func TestUpAppliesEverythingOnceThenNothing(t *testing.T) {
	all := versions(migrations.All())
	eachEmpty(t, func(t *testing.T, _ string, db *storage.DB) {
		ctx := context.Background()
		if n, err := migrations.Pending(ctx, db); err != nil || n != len(all) {
			t.Fatalf("Pending on an empty database = %d, %v; want %d", n, err, len(all))
		}
		list, unknown, err := migrations.StatusOf(ctx, db)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range list {
			if s.AppliedAt != nil {
				t.Errorf("%s_%s is applied on an empty database", s.Version, s.Name)
			}
		}
		if len(unknown) != 0 {
			t.Errorf("unknown versions on an empty database: %v", unknown)
		}

		begin := time.Now().Add(-time.Second)
		applied, err := migrations.Up(ctx, db)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(all, versions(applied)); diff != "" {
			t.Errorf("first Up applied (-want +got):\n%s", diff)
		}

		list, _, err = migrations.StatusOf(ctx, db)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(all, versionsOf(list)); diff != "" {
			t.Errorf("StatusOf lists (-want +got):\n%s", diff)
		}
		for _, s := range list {
			if s.AppliedAt == nil || s.AppliedAt.Before(begin) || s.AppliedAt.After(time.Now().Add(time.Second)) {
				t.Errorf("%s_%s: applied at %v, want the time of the first Up", s.Version, s.Name, s.AppliedAt)
			}
		}
		if n, err := migrations.Pending(ctx, db); err != nil || n != 0 {
			t.Errorf("Pending after Up = %d, %v; want 0", n, err)
		}

		again, err := migrations.Up(ctx, db)
		if err != nil || len(again) != 0 {
			t.Errorf("second Up applied %v, %v; want nothing", versions(again), err)
		}
	})
}

func versionsOf(list []migrations.Status) []string {
	var out []string
	for _, s := range list {
		out = append(out, s.Version)
	}
	return out
}

func TestUpBuildsTheCoreSchema(t *testing.T) {
	eachEmpty(t, func(t *testing.T, _ string, db *storage.DB) {
		ctx := context.Background()
		if _, err := migrations.Up(ctx, db); err != nil {
			t.Fatal(err)
		}
		for _, table := range []string{"tokens", "users", "settings", "counters", "threads", "messages", "events"} {
			var n int
			if err := db.NewRaw("SELECT count(*) FROM ?", bun.Ident(table)).Scan(ctx, &n); err != nil {
				t.Errorf("table %s: %v", table, err)
			}
		}
	})
}

func TestStatusNamesVersionsThisBinaryDoesNotKnow(t *testing.T) {
	eachEmpty(t, func(t *testing.T, _ string, db *storage.DB) {
		ctx := context.Background()
		if _, err := migrations.Up(ctx, db); err != nil {
			t.Fatal(err)
		}
		// What a newer Parley would have recorded.
		_, err := db.NewRaw("INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)",
			"29991231235959", "from_the_future", time.Now().UTC()).Exec(ctx)
		if err != nil {
			t.Fatal(err)
		}
		list, unknown, err := migrations.StatusOf(ctx, db)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]string{"29991231235959_from_the_future"}, unknown); diff != "" {
			t.Errorf("unknown (-want +got):\n%s", diff)
		}
		if len(list) != len(migrations.All()) {
			t.Errorf("StatusOf lists %d migrations, want the %d known ones", len(list), len(migrations.All()))
		}
	})
}

// TestConcurrentUpAppliesEachMigrationOnce: several parley processes may start at once on one
// database; between them every migration runs exactly once and none fails.
func TestConcurrentUpAppliesEachMigrationOnce(t *testing.T) {
	const processes = 4
	eachEmpty(t, func(t *testing.T, rawURL string, _ *storage.DB) {
		ctx := context.Background()
		dbs := make([]*storage.DB, processes)
		for i := range dbs {
			db, err := storage.Open(ctx, rawURL)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { db.Close() })
			dbs[i] = db
		}
		var (
			wg    sync.WaitGroup
			start = make(chan struct{})
			mu    sync.Mutex
			runs  = map[string]int{}
		)
		for _, db := range dbs {
			wg.Go(func() {
				<-start
				applied, err := migrations.Up(ctx, db)
				if err != nil {
					t.Errorf("concurrent Up: %v", err)
				}
				mu.Lock()
				defer mu.Unlock()
				for _, m := range applied {
					runs[m.Version]++
				}
			})
		}
		close(start)
		wg.Wait()
		for _, v := range versions(migrations.All()) {
			if runs[v] != 1 {
				t.Errorf("migration %s ran %d times, want once", v, runs[v])
			}
		}
		var rows int
		if err := dbs[0].NewRaw("SELECT count(*) FROM schema_migrations").Scan(ctx, &rows); err != nil {
			t.Fatal(err)
		}
		if rows != len(migrations.All()) {
			t.Errorf("schema_migrations has %d rows, want %d", rows, len(migrations.All()))
		}
	})
}

// TestEveryMigrationFileIsRegistered keeps the folder and the list in step: each
// YYYYMMDDHHMMSS_name.go file is one registered migration, in version order.
func TestEveryMigrationFileIsRegistered(t *testing.T) {
	fileName := regexp.MustCompile(`^(\d{14})_([a-z0-9_]+)\.go$`)
	entries, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	var files []string
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") || name == "migrations.go" {
			continue
		}
		m := fileName.FindStringSubmatch(name)
		if m == nil {
			t.Errorf("%s is not named YYYYMMDDHHMMSS_name.go", name)
			continue
		}
		if _, err := time.Parse("20060102150405", m[1]); err != nil {
			t.Errorf("%s: the version is not a timestamp: %v", name, err)
		}
		files = append(files, m[1]+"_"+m[2])
	}
	var registered []string
	for i, m := range migrations.All() {
		registered = append(registered, m.Version+"_"+m.Name)
		if m.Up == nil {
			t.Errorf("%s_%s has no Up", m.Version, m.Name)
		}
		if i > 0 && m.Version <= migrations.All()[i-1].Version {
			t.Errorf("All() is not in version order at %s", m.Version)
		}
	}
	if diff := cmp.Diff(files, registered); diff != "" {
		t.Errorf("migration files (-) and registered migrations (+) differ:\n%s", diff)
	}
}
