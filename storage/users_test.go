package storage_test

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/parleyforum/parley/storage"
	"github.com/parleyforum/parley/storage/storagetest"
)

func TestUsers(t *testing.T) {
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		ctx := context.Background()
		countIs := func(want int) {
			t.Helper()
			n, err := db.CountUsers(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if n != want {
				t.Fatalf("CountUsers = %d, want %d", n, want)
			}
		}
		countIs(0)
		if _, err := db.UserByName(ctx, "alice"); !errors.Is(err, storage.ErrNotFound) {
			t.Fatalf("UserByName on an empty database: err = %v, want ErrNotFound", err)
		}

		alice, err := db.CreateUser(ctx, "alice", "$argon2id$alice")
		if err != nil {
			t.Fatal(err)
		}
		if alice.ID == 0 || alice.CreatedAt.IsZero() {
			t.Fatalf("created user %+v lacks its id or time", alice)
		}
		countIs(1)
		found, err := db.UserByName(ctx, "alice")
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(alice, found); diff != "" {
			t.Errorf("found user differs from the created one (-created +found):\n%s", diff)
		}

		if _, err := db.CreateUser(ctx, "alice", "$argon2id$other"); !errors.Is(err, storage.ErrAlreadyExists) {
			t.Fatalf("duplicate user: err = %v, want ErrAlreadyExists", err)
		}
		countIs(1)
		if found, _ := db.UserByName(ctx, "alice"); found.PasswordHash != "$argon2id$alice" {
			t.Errorf("the refused duplicate changed the password hash to %q", found.PasswordHash)
		}

		if _, err := db.CreateUser(ctx, "bob", "$argon2id$bob"); err != nil {
			t.Fatal(err)
		}
		countIs(2)
	})
}
