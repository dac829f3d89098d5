package storage_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/parleyforum/parley/storage"
	"github.com/parleyforum/parley/storage/storagetest"
)

func label(s string) *string { return &s }

func TestTokenCreateAndFind(t *testing.T) {
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		ctx := context.Background()
		created, err := db.CreateToken(ctx, storage.NewToken{
			Identity: "ainotes:alice", SecretHash: "hash-alice", Rights: "read,write,lock", Label: label("Alice"),
		})
		if err != nil {
			t.Fatal(err)
		}
		if created.ID == 0 || created.CreatedAt.IsZero() || created.RevokedAt != nil {
			t.Fatalf("created token %+v lacks its id or time, or is revoked", created)
		}
		found, err := db.TokenByHash(ctx, "hash-alice")
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(created, found); diff != "" {
			t.Errorf("found token differs from the created one (-created +found):\n%s", diff)
		}

		human, err := db.CreateToken(ctx, storage.NewToken{
			Identity: "human:bob", Human: true, SecretHash: "hash-bob", Rights: "read,write,lock,verify",
		})
		if err != nil {
			t.Fatal(err)
		}
		if human.ID == created.ID {
			t.Fatalf("two tokens share id %d", human.ID)
		}
		found, err = db.TokenByHash(ctx, "hash-bob")
		if err != nil {
			t.Fatal(err)
		}
		if !found.Human || found.Label != nil || found.Identity != "human:bob" {
			t.Errorf("human token read back as %+v", found)
		}

		if _, err := db.TokenByHash(ctx, "no-such-hash"); !errors.Is(err, storage.ErrNotFound) {
			t.Errorf("unknown hash: err = %v, want ErrNotFound", err)
		}
	})
}

func TestTokenHashIsUnique(t *testing.T) {
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		ctx := context.Background()
		nt := storage.NewToken{Identity: "ainotes:a", SecretHash: "same", Rights: "read"}
		if _, err := db.CreateToken(ctx, nt); err != nil {
			t.Fatal(err)
		}
		nt.Identity = "ainotes:b"
		if _, err := db.CreateToken(ctx, nt); !errors.Is(err, storage.ErrAlreadyExists) {
			t.Fatalf("second token with the same hash: err = %v, want ErrAlreadyExists", err)
		}
	})
}

func TestTokenRevoke(t *testing.T) {
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		ctx := context.Background()
		tok, err := db.CreateToken(ctx, storage.NewToken{Identity: "ainotes:alice", SecretHash: "h1", Rights: "read"})
		if err != nil {
			t.Fatal(err)
		}
		other, err := db.CreateToken(ctx, storage.NewToken{Identity: "ainotes:bob", SecretHash: "h2", Rights: "read"})
		if err != nil {
			t.Fatal(err)
		}
		if err := db.RevokeToken(ctx, tok.ID); err != nil {
			t.Fatal(err)
		}
		_, err = db.TokenByHash(ctx, "h1")
		if !errors.Is(err, storage.ErrRevoked) {
			t.Fatalf("revoked token: err = %v, want ErrRevoked", err)
		}
		if errors.Is(err, storage.ErrNotFound) {
			t.Errorf("revoked token: err %v is ErrNotFound too; logs could not tell them apart", err)
		}
		if _, err := db.TokenByHash(ctx, "h2"); err != nil {
			t.Errorf("revoking one token touched another: %v", err)
		}

		// Revoking again succeeds and keeps the first time.
		first := revokedAt(t, db, tok.ID)
		if err := db.RevokeToken(ctx, tok.ID); err != nil {
			t.Fatalf("revoking twice: %v", err)
		}
		if again := revokedAt(t, db, tok.ID); !again.Equal(first) {
			t.Errorf("revoking twice moved the revocation time from %v to %v", first, again)
		}

		if err := db.RevokeToken(ctx, other.ID+100); !errors.Is(err, storage.ErrNotFound) {
			t.Errorf("revoking an unknown id: err = %v, want ErrNotFound", err)
		}
	})
}

func revokedAt(t *testing.T, db *storage.DB, id int64) time.Time {
	t.Helper()
	tokens, err := db.Tokens(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, tok := range tokens {
		if tok.ID == id {
			if tok.RevokedAt == nil {
				t.Fatalf("token %d is not revoked", id)
			}
			return *tok.RevokedAt
		}
	}
	t.Fatalf("token %d not listed", id)
	return time.Time{}
}

func TestTokensList(t *testing.T) {
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		ctx := context.Background()
		tokens, err := db.Tokens(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if tokens == nil || len(tokens) != 0 {
			t.Fatalf("fresh database lists %#v, want an empty, non-nil list", tokens)
		}
		var want []string
		for _, id := range []string{"ainotes:c", "ainotes:a", "human:b"} {
			if _, err := db.CreateToken(ctx, storage.NewToken{Identity: id, SecretHash: "h-" + id, Rights: "read"}); err != nil {
				t.Fatal(err)
			}
			want = append(want, id)
		}
		tokens, err = db.Tokens(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for i, tok := range tokens {
			got = append(got, tok.Identity)
			if i > 0 && tokens[i-1].ID >= tok.ID {
				t.Errorf("tokens not in id order: %d before %d", tokens[i-1].ID, tok.ID)
			}
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("listed identities (-want +got):\n%s", diff)
		}
	})
}
