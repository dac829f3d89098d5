package storage_test

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/parleyforum/parley/storage"
	"github.com/parleyforum/parley/storage/storagetest"
)

// The first account is made once: of setup forms sent at once exactly one wins, and it is an
// administrator; later accounts are administrators only when asked.
func TestCreateFirstUser(t *testing.T) {
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		ctx := context.Background()
		var wg sync.WaitGroup
		var mu sync.Mutex
		won, lost := 0, 0
		for _, name := range []string{"ada", "bea", "cem", "dan"} {
			wg.Go(func() {
				_, err := db.CreateFirstUser(ctx, name, "$argon2id$"+name)
				mu.Lock()
				defer mu.Unlock()
				switch {
				case err == nil:
					won++
				case errors.Is(err, storage.ErrAlreadyExists), errors.Is(err, storage.ErrUnavailable):
					lost++ // SQLite may report the lost race as a busy database
				default:
					t.Errorf("CreateFirstUser(%s): %v", name, err)
				}
			})
		}
		wg.Wait()
		users, err := db.Users(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if won != 1 || len(users) != 1 || !users[0].Admin {
			t.Fatalf("%d won, %d lost, users %+v; want one administrator", won, lost, users)
		}
		if _, err := db.CreateFirstUser(ctx, "eve", "$argon2id$eve"); !errors.Is(err, storage.ErrAlreadyExists) {
			t.Errorf("a first user after the first: %v, want ErrAlreadyExists", err)
		}
		if _, err := db.CreateAdmin(ctx, "fay", "$argon2id$fay"); err != nil {
			t.Fatal(err)
		}
		if _, err := db.CreateUser(ctx, "gus", "$argon2id$gus"); err != nil {
			t.Fatal(err)
		}
		users, _ = db.Users(ctx)
		if len(users) != 3 || !users[1].Admin || users[2].Admin || users[1].Name != "fay" {
			t.Errorf("users %+v: want the first, fay an administrator, gus not, oldest first", users)
		}
	})
}

// LiveTokensOf finds the tokens of the identities asked for that are not revoked.
func TestLiveTokensOf(t *testing.T) {
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		ctx := context.Background()
		mk := func(identity, hash string) *storage.Token {
			tok, err := db.CreateToken(ctx, storage.NewToken{Identity: identity, SecretHash: hash, Rights: "read,lock"})
			if err != nil {
				t.Fatal(err)
			}
			return tok
		}
		mk("ainotes:mod", "h1")
		gone := mk("ainotes:mod", "h2")
		mk("ainotes:other", "h3")
		if err := db.RevokeToken(ctx, gone.ID); err != nil {
			t.Fatal(err)
		}
		got, err := db.LiveTokensOf(ctx, []string{"ainotes:mod", "ainotes:nobody"})
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 1 || got[0].SecretHash != "h1" {
			t.Errorf("LiveTokensOf = %+v, want mod's live token alone", got)
		}
		if none, err := db.LiveTokensOf(ctx, nil); err != nil || len(none) != 0 {
			t.Errorf("LiveTokensOf(nil) = %v, %v", none, err)
		}
	})
}
