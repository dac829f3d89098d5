package storage_test

import (
	"context"
	"testing"
	"time"

	"github.com/parleyforum/parley/storage"
	"github.com/parleyforum/parley/storage/storagetest"
)

// Two puts of the same new bytes on Postgres, the second sent while the first, which fills
// the store's quota, has not committed yet: the second waits for the first's commit, finds the
// bytes stored and succeeds at the quota, charging nothing. (On SQLite one writer at a time
// runs, so the second looks only after the first has committed.)
func TestArtifactChargedOnceWhenTheSameBytesRace(t *testing.T) {
	db := storagetest.Open(t, storage.Postgres)
	ctx := context.Background()
	quota := storage.ArtifactQuota{PerIdentity: 60, Total: 60}
	artifact := func(identity string) *storage.Artifact {
		return &storage.Artifact{Ref: "sha256:same", Size: 60, MediaType: "text/plain", Content: make([]byte, 60),
			Identity: identity, CreatedAt: storage.Now()}
	}
	reached, release, firstDone := make(chan struct{}), make(chan struct{}), make(chan error, 1)
	go func() {
		_, err := db.PutArtifact(ctx, artifact("ainotes:first"), quota, noStep, func(context.Context, *storage.Forum, *storage.Artifact) error {
			close(reached) // inserted and charged, not yet committed
			<-release
			return nil
		})
		firstDone <- err
	}()
	<-reached
	secondDone := make(chan error, 1)
	go func() {
		_, err := db.PutArtifact(ctx, artifact("ainotes:second"), quota, noStep)
		secondDone <- err
	}()
	waitFor(t, db, "the second put waiting for the first", "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'", 1)
	close(release)
	if err := <-firstDone; err != nil {
		t.Fatalf("the first put: %v", err)
	}
	if err := <-secondDone; err != nil {
		t.Fatalf("the second put of the same bytes: %v", err)
	}
	for identity, want := range map[string]int64{"ainotes:first": 60, "ainotes:second": 0} {
		mine, all, err := db.Read().ArtifactUsage(ctx, identity)
		if err != nil || mine != want || all != 60 {
			t.Errorf("%s: %d bytes of %d in all, %v; want %d of 60", identity, mine, all, err, want)
		}
	}
}

// waitFor polls query until the count it answers reaches want.
func waitFor(t *testing.T, db *storage.DB, what, query string, want int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		var n int
		if err := db.NewRaw(query).Scan(context.Background(), &n); err != nil {
			t.Fatal(err)
		}
		if n >= want {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("waited 5 s for %s", what)
}
