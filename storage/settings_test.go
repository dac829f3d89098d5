package storage_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/parleyforum/parley/migrations"
	"github.com/parleyforum/parley/storage"
	"github.com/parleyforum/parley/storage/storagetest"
)

func TestSettingGetSetDelete(t *testing.T) {
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		ctx := context.Background()
		if _, err := db.Setting(ctx, "colour"); !errors.Is(err, storage.ErrNotFound) {
			t.Fatalf("missing setting: err = %v, want ErrNotFound", err)
		}
		for _, v := range []string{"blue", "green", ""} {
			if err := db.SetSetting(ctx, "colour", v); err != nil {
				t.Fatalf("SetSetting(%q): %v", v, err)
			}
			got, err := db.Setting(ctx, "colour")
			if err != nil {
				t.Fatal(err)
			}
			if got != v {
				t.Fatalf("Setting = %q after setting %q", got, v)
			}
		}
		if err := db.SetSetting(ctx, "size", "large"); err != nil {
			t.Fatal(err)
		}
		if err := db.DeleteSetting(ctx, "colour"); err != nil {
			t.Fatal(err)
		}
		if _, err := db.Setting(ctx, "colour"); !errors.Is(err, storage.ErrNotFound) {
			t.Fatalf("deleted setting: err = %v, want ErrNotFound", err)
		}
		if err := db.DeleteSetting(ctx, "colour"); err != nil {
			t.Fatalf("deleting a missing setting: %v", err)
		}
		if got, err := db.Setting(ctx, "size"); err != nil || got != "large" {
			t.Fatalf("deleting one setting touched another: %q, %v", got, err)
		}
	})
}

func TestSettingOrCreate(t *testing.T) {
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		ctx := context.Background()
		calls := 0
		create := func() (string, error) { calls++; return fmt.Sprintf("value-%d", calls), nil }

		v, created, err := db.SettingOrCreate(ctx, storage.SettingSessionKey, create)
		if err != nil || !created || v != "value-1" {
			t.Fatalf("first call = %q, %v, %v; want value-1, created", v, created, err)
		}
		v, created, err = db.SettingOrCreate(ctx, storage.SettingSessionKey, create)
		if err != nil || created || v != "value-1" {
			t.Fatalf("second call = %q, %v, %v; want the kept value-1", v, created, err)
		}
		if calls != 1 {
			t.Errorf("create was called %d times; a kept value needs no new one", calls)
		}

		failing := func() (string, error) { return "", errors.New("no randomness") }
		if _, _, err := db.SettingOrCreate(ctx, storage.SettingSetupCode, failing); err == nil {
			t.Fatal("a failing create did not fail the call")
		}
		if _, err := db.Setting(ctx, storage.SettingSetupCode); !errors.Is(err, storage.ErrNotFound) {
			t.Fatalf("a failing create stored something: %v", err)
		}
	})
}

// Several processes starting at once on one database must agree on one value: each of them
// would otherwise sign cookies with a key the others reject.
func TestSettingOrCreateRace(t *testing.T) {
	for _, kind := range storagetest.Kinds() {
		t.Run(string(kind), func(t *testing.T) {
			url := storagetest.NewURL(t, kind)
			ctx := context.Background()
			first := openURL(t, url)
			if _, err := migrations.Up(ctx, first); err != nil {
				t.Fatal(err)
			}

			const racers = 8
			dbs := []*storage.DB{first}
			for len(dbs) < racers {
				dbs = append(dbs, openURL(t, url))
			}
			values := make([]string, racers)
			errs := make([]error, racers)
			created := make([]bool, racers)
			start := make(chan struct{})
			var wg sync.WaitGroup
			for i, db := range dbs {
				wg.Add(1)
				go func() {
					defer wg.Done()
					<-start
					values[i], created[i], errs[i] = db.SettingOrCreate(ctx, "race", func() (string, error) {
						return fmt.Sprintf("racer-%d", i), nil
					})
				}()
			}
			close(start)
			wg.Wait()
			winners := 0
			for i := range dbs {
				if errs[i] != nil {
					t.Fatalf("racer %d: %v", i, errs[i])
				}
				if values[i] != values[0] {
					t.Errorf("racer %d got %q, racer 0 got %q", i, values[i], values[0])
				}
				if created[i] {
					winners++
				}
			}
			if winners != 1 {
				t.Errorf("%d racers say they created the setting, want exactly 1", winners)
			}
		})
	}
}

// openURL opens one more connection pool on the database at url, as another process would.
func openURL(t *testing.T, url string) *storage.DB {
	t.Helper()
	db, err := storage.Open(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}
