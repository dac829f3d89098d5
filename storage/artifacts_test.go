package storage_test

import (
	"bytes"
	"context"
	"errors"
	"testing"

	"github.com/parleyforum/parley/storage"
	"github.com/parleyforum/parley/storage/storagetest"
)

func noStep(context.Context, *storage.Forum) error { return nil }

// roomy is a quota that the artifacts of these tests stay far below.
var roomy = storage.ArtifactQuota{PerIdentity: 1 << 20, Total: 1 << 30}

// Artifacts keep every byte as given, once per ref; a failing step in their transaction
// stores nothing.
func TestArtifactStore(t *testing.T) {
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		ctx := context.Background()
		content := make([]byte, 256)
		for i := range content {
			content[i] = byte(i)
		}
		a := &storage.Artifact{Ref: "sha256:x", Size: 256, MediaType: "application/octet-stream", Content: content, Identity: "ainotes:alice", CreatedAt: storage.Now()}
		stored, err := db.PutArtifact(ctx, a, roomy, noStep)
		if err != nil {
			t.Fatal(err)
		}
		if stored.Ref != a.Ref || stored.Size != 256 || stored.MediaType != a.MediaType || stored.Content != nil {
			t.Errorf("stored %+v", stored)
		}
		again := *a
		again.MediaType, again.Identity = "text/plain", "ainotes:bob"
		if second, err := db.PutArtifact(ctx, &again, roomy, noStep); err != nil || second.MediaType != a.MediaType || second.Identity != "ainotes:alice" {
			t.Errorf("the same ref again: %+v, %v; want the first upload", second, err)
		}
		got, err := db.Read().Artifact(ctx, a.Ref)
		if err != nil || !bytes.Equal(got.Content, content) {
			t.Errorf("read back %v bytes, %v", len(got.Content), err)
		}
		refused := errors.New("refused")
		b := *a
		b.Ref = "sha256:y"
		if _, err := db.PutArtifact(ctx, &b, roomy, func(context.Context, *storage.Forum) error { return refused }); !errors.Is(err, refused) {
			t.Errorf("a failing step: %v", err)
		}
		for ref, want := range map[string]bool{"sha256:x": true, "sha256:y": false} {
			if has, err := db.Read().HasArtifact(ctx, ref); err != nil || has != want {
				t.Errorf("HasArtifact(%s) = %v, %v; want %v", ref, has, err, want)
			}
		}
		if _, err := db.Read().Artifact(ctx, "sha256:y"); !errors.Is(err, storage.ErrNotFound) {
			t.Errorf("an artifact never stored: %v", err)
		}
	})
}

// A key is registered once per identity, and a stance reads with its signing key's public key.
func TestSigningKeys(t *testing.T) {
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		ctx := context.Background()
		var first, second *storage.SigningKey
		err := db.Write(ctx, func(ctx context.Context, f *storage.Forum) error {
			var created bool
			var err error
			if first, created, err = f.RegisterKey(ctx, &storage.SigningKey{Identity: "ainotes:bob", PublicKey: "pk", CreatedAt: storage.Now()}); err != nil || !created {
				t.Errorf("first registration: created %v, %v", created, err)
			}
			if second, created, err = f.RegisterKey(ctx, &storage.SigningKey{Identity: "ainotes:bob", PublicKey: "pk", CreatedAt: storage.Now()}); err != nil || created {
				t.Errorf("second registration: created %v, %v", created, err)
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		if first.ID != second.ID {
			t.Errorf("the same key twice has ids %d and %d", first.ID, second.ID)
		}
		if keys, err := db.Read().KeysOf(ctx, "ainotes:bob"); err != nil || len(keys) != 1 {
			t.Errorf("bob's keys: %v, %v", keys, err)
		}
		if _, err := db.Read().SigningKey(ctx, first.ID+100); !errors.Is(err, storage.ErrNotFound) {
			t.Errorf("an unknown key: %v", err)
		}
	})
}

// On SQLite the connection that commits an artifact (with synchronous FULL) goes back to
// NORMAL, the setting of every other write.
func TestArtifactCommitLeavesSQLiteAsItWas(t *testing.T) {
	db := storagetest.Open(t, storage.SQLite)
	ctx := context.Background()
	db.SetMaxOpenConns(1) // the connection that commits the artifact is the one asked after
	a := &storage.Artifact{Ref: "sha256:z", Size: 1, MediaType: "text/plain", Content: []byte("z"), Identity: "ainotes:alice", CreatedAt: storage.Now()}
	if _, err := db.PutArtifact(ctx, a, roomy, noStep); err != nil {
		t.Fatal(err)
	}
	var after int
	if err := db.NewRaw("PRAGMA synchronous").Scan(ctx, &after); err != nil {
		t.Fatal(err)
	}
	if after != 1 {
		t.Errorf("synchronous is %d after an artifact's commit; want 1 (NORMAL)", after)
	}
}
