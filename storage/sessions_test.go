package storage_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/parleyforum/parley/storage"
	"github.com/parleyforum/parley/storage/storagetest"
)

// Sessions: found with their human in one read while they last; an expired or ended one is
// nobody; a human ends only their own; a password change ends all and starts the one given.
func TestSessions(t *testing.T) {
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		ctx := context.Background()
		ada, err := db.CreateUser(ctx, "ada", "hash-1")
		if err != nil {
			t.Fatal(err)
		}
		bea, err := db.CreateUser(ctx, "bea", "hash-2")
		if err != nil {
			t.Fatal(err)
		}
		later := storage.Now().Add(time.Hour)
		one, err := db.CreateSession(ctx, ada.ID, storage.NewSession{Hash: "h1", Agent: "Firefox", ExpiresAt: later})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := db.CreateSession(ctx, ada.ID, storage.NewSession{Hash: "h2", ExpiresAt: later}); err != nil {
			t.Fatal(err)
		}
		if _, err := db.CreateSession(ctx, ada.ID, storage.NewSession{Hash: "gone", ExpiresAt: storage.Now().Add(-time.Second)}); err != nil {
			t.Fatal(err)
		}
		theirs, err := db.CreateSession(ctx, bea.ID, storage.NewSession{Hash: "b1", ExpiresAt: later})
		if err != nil {
			t.Fatal(err)
		}

		s, err := db.SessionByHash(ctx, "h1")
		if err != nil || s.ID != one.ID || s.User == nil || s.User.Name != "ada" || s.User.PasswordHash != "hash-1" || s.Agent != "Firefox" {
			t.Fatalf("SessionByHash(h1) = %+v, %v; want ada's session with ada", s, err)
		}
		for _, hash := range []string{"gone", "never"} {
			if _, err := db.SessionByHash(ctx, hash); !errors.Is(err, storage.ErrNotFound) {
				t.Errorf("SessionByHash(%s) = %v, want ErrNotFound", hash, err)
			}
		}
		if list, err := db.Sessions(ctx, ada.ID); err != nil || len(list) != 2 {
			t.Errorf("ada's sessions: %d, %v; want the 2 that last", len(list), err)
		}
		if err := db.EndSessionOf(ctx, ada.ID, theirs.ID); !errors.Is(err, storage.ErrNotFound) {
			t.Errorf("ada ending bea's session: %v, want ErrNotFound", err)
		}
		if _, err := db.SessionByHash(ctx, "b1"); err != nil {
			t.Errorf("bea's session after ada tried to end it: %v", err)
		}
		if err := db.EndSessionOf(ctx, ada.ID, one.ID); err != nil {
			t.Fatal(err)
		}
		if _, err := db.SessionByHash(ctx, "h1"); !errors.Is(err, storage.ErrNotFound) {
			t.Errorf("an ended session is still found: %v", err)
		}

		fresh, err := db.ChangePassword(ctx, ada.ID, "hash-3", storage.NewSession{Hash: "h3", ExpiresAt: later})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := db.SessionByHash(ctx, "h2"); !errors.Is(err, storage.ErrNotFound) {
			t.Errorf("a session from before the password change survives it: %v", err)
		}
		if s, err := db.SessionByHash(ctx, "h3"); err != nil || s.ID != fresh.ID || s.User.PasswordHash != "hash-3" {
			t.Errorf("the session of the change: %+v, %v", s, err)
		}
		if n, err := db.EndSessions(ctx, ada.ID); err != nil || n != 1 {
			t.Errorf("EndSessions = %d, %v; want 1", n, err)
		}
		if _, err := db.SessionByHash(ctx, "b1"); err != nil {
			t.Errorf("ending ada's sessions ended bea's: %v", err)
		}
		until := storage.Now().Add(48 * time.Hour)
		if err := db.RenewSession(ctx, theirs.ID, until); err != nil {
			t.Fatal(err)
		}
		if s, _ := db.SessionByHash(ctx, "b1"); !s.ExpiresAt.Equal(until) {
			t.Errorf("the renewed session expires %v, want %v", s.ExpiresAt, until)
		}
	})
}
