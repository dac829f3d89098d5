package migrations_test

import (
	"context"
	"strings"
	"testing"

	"github.com/parleyforum/parley/migrations"
	"github.com/parleyforum/parley/protocol"
	"github.com/parleyforum/parley/storage"
)

// TestArtifactUsageCountsArtifactsStoredBefore writes artifacts as they stood before the
// quotas (20261204171500_artifact_usage): after the migration, each identity's bytes and the
// store's are what was stored, so the quotas hold from the first put on — alice, with 60 of 64
// bytes, can store 4 more and not 5, and the same bytes again cost her nothing.
func TestArtifactUsageCountsArtifactsStoredBefore(t *testing.T) {
	eachEmpty(t, func(t *testing.T, _ string, db *storage.DB) {
		ctx := context.Background()
		if _, err := migrations.UpTo(ctx, db, "20261204090000"); err != nil {
			t.Fatal(err)
		}
		stored := map[string]string{
			"ainotes:alice": strings.Repeat("a", 40),
			"ainotes:bob":   strings.Repeat("b", 30),
		}
		put := func(identity, content string) {
			t.Helper()
			_, err := db.NewRaw("INSERT INTO artifacts (ref, size, media_type, content, identity, created_at) VALUES (?, ?, 'text/plain', ?, ?, ?)",
				protocol.ArtifactRef([]byte(content)), len(content), []byte(content), identity, storage.Now()).Exec(ctx)
			if err != nil {
				t.Fatal(err)
			}
		}
		for identity, content := range stored {
			put(identity, content)
		}
		put("ainotes:alice", strings.Repeat("c", 20))
		if _, err := migrations.Up(ctx, db); err != nil {
			t.Fatalf("migrating the old artifacts: %v", err)
		}
		for identity, want := range map[string]int64{"ainotes:alice": 60, "ainotes:bob": 30, "ainotes:carol": 0} {
			if mine, all, err := db.Read().ArtifactUsage(ctx, identity); err != nil || mine != want || all != 90 {
				t.Errorf("%s: %d bytes of %d, %v; want %d of 90", identity, mine, all, err, want)
			}
		}
		limits := protocol.DefaultLimits()
		limits.ArtifactBytesPerIdentity = 64
		svc := protocol.New(db, protocol.Options{Limits: limits})
		alice := &protocol.Actor{Identity: "ainotes:alice", Rights: mustRights(t, "read,write")}
		_, err := svc.PutArtifact(ctx, alice, []byte("12345"), "")
		if e, ok := protocol.AsError(err); !ok || e.Reason != protocol.ReasonPayloadTooLarge {
			t.Errorf("alice, with 60 bytes stored before, storing 5 more under a quota of 64: %v, want payload_too_large", err)
		}
		if _, err := svc.PutArtifact(ctx, alice, []byte(stored["ainotes:bob"]), ""); err != nil {
			t.Errorf("bob's bytes again, by alice: %v", err)
		}
		if _, err := svc.PutArtifact(ctx, alice, []byte("1234"), ""); err != nil {
			t.Errorf("alice's last 4 bytes: %v", err)
		}
	})
}

// A forum with no artifact has a total of 0 after the migration, and takes its first one.
func TestArtifactUsageOnAnEmptyStore(t *testing.T) {
	eachEmpty(t, func(t *testing.T, _ string, db *storage.DB) {
		ctx := context.Background()
		if _, err := migrations.Up(ctx, db); err != nil {
			t.Fatal(err)
		}
		if _, all, err := db.Read().ArtifactUsage(ctx, ""); err != nil || all != 0 {
			t.Fatalf("an empty store holds %d bytes, %v", all, err)
		}
		svc := protocol.New(db, protocol.Options{Limits: protocol.DefaultLimits()})
		if _, err := svc.PutArtifact(ctx, &protocol.Actor{Identity: "ainotes:alice", Rights: mustRights(t, "write")}, []byte("first"), ""); err != nil {
			t.Fatal(err)
		}
		if mine, all, err := db.Read().ArtifactUsage(ctx, "ainotes:alice"); err != nil || mine != 5 || all != 5 {
			t.Errorf("after the first artifact: %d of %d, %v; want 5 of 5", mine, all, err)
		}
	})
}
