package main

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/parleyforum/parley/storage"
	"github.com/parleyforum/parley/web/password"
)

func TestUserAdd(t *testing.T) {
	eachKind(t, func(t *testing.T, url string) {
		out := invocation{args: []string{"user", "add", "--password-stdin", "--db", url, "--name", "alice"}, stdin: "correct horse battery\n"}.
			run(t).ok(t, "user add").stdout
		if !strings.Contains(out, "human:alice") {
			t.Errorf("user add printed %q", out)
		}
		u, err := openDB(t, url).UserByName(context.Background(), "alice")
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(u.PasswordHash, "correct horse") {
			t.Fatal("the password is stored in clear")
		}
		for pw, want := range map[string]bool{"correct horse battery": true, "correct horse battery\n": false} {
			if ok, err := password.Verify(u.PasswordHash, pw); err != nil || ok != want {
				t.Errorf("Verify(stored, %q) = %v, %v; want %v", pw, ok, err, want)
			}
		}

		if u.Admin {
			t.Error("user add without --admin made an administrator")
		}
		invocation{args: []string{"user", "add", "--admin", "--name", "root", "--password-stdin", "--db", url}, stdin: "correct horse battery\n"}.
			run(t).ok(t, "user add --admin")
		if r, err := openDB(t, url).UserByName(context.Background(), "root"); err != nil || !r.Admin {
			t.Errorf("user add --admin: %+v, %v; want an administrator", r, err)
		}

		invocation{args: []string{"user", "add", "--name", "alice", "--password-stdin", "--db", url}, stdin: "another password"}.
			run(t).fails(t, "duplicate user", exitRuntime, "already exists")
		// Without a trailing newline the whole input is the password.
		invocation{args: []string{"user", "add", "--name", "bob", "--password-stdin", "--db", url}, stdin: "no newline here"}.
			run(t).ok(t, "user add without a newline")
		b, err := openDB(t, url).UserByName(context.Background(), "bob")
		if err != nil {
			t.Fatal(err)
		}
		if ok, _ := password.Verify(b.PasswordHash, "no newline here"); !ok {
			t.Error("the password read without a trailing newline does not verify")
		}
	})
}

// user signout ends every session of one human, and only theirs.
func TestUserSignout(t *testing.T) {
	eachKind(t, func(t *testing.T, url string) {
		ctx := context.Background()
		invocation{args: []string{"migrate", "--db", url}}.run(t).ok(t, "migrate")
		db := openDB(t, url)
		future := storage.Now().Add(time.Hour)
		var ids []int64
		for name, sessions := range map[string]int{"alice": 2, "bob": 1} {
			u, err := db.CreateUser(ctx, name, "$argon2id$v=19$x")
			if err != nil {
				t.Fatal(err)
			}
			ids = append(ids, u.ID)
			for i := range sessions {
				if _, err := db.CreateSession(ctx, u.ID, storage.NewSession{Hash: fmt.Sprintf("%s-%d", name, i), ExpiresAt: future}); err != nil {
					t.Fatal(err)
				}
			}
		}
		out := invocation{args: []string{"user", "signout", "--name", "alice", "--db", url}}.run(t).ok(t, "user signout").stdout
		if !strings.Contains(out, "ended 2 sessions of human:alice") {
			t.Errorf("user signout printed %q", out)
		}
		alice, err := db.UserByName(ctx, "alice")
		if err != nil {
			t.Fatal(err)
		}
		for _, id := range ids {
			want := 1 // bob's
			if id == alice.ID {
				want = 0
			}
			if list, err := db.Sessions(ctx, id); err != nil || len(list) != want {
				t.Errorf("user %d has %d sessions, %v; want %d", id, len(list), err, want)
			}
		}
		// One session is one session, not "1 sessions".
		out = invocation{args: []string{"user", "signout", "--name", "bob", "--db", url}}.run(t).ok(t, "user signout").stdout
		if !strings.Contains(out, "ended 1 session of human:bob") {
			t.Errorf("user signout of bob's one session printed %q", out)
		}
		invocation{args: []string{"user", "signout", "--name", "nobody", "--db", url}}.run(t).fails(t, "unknown user", exitRuntime, "no user named nobody")
		invocation{args: []string{"user", "signout", "--db", url}}.run(t).fails(t, "no name", exitUsage, "--name")
	})
}
