package storage_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/parleyforum/parley/migrations"
	"github.com/parleyforum/parley/storage"
	"github.com/parleyforum/parley/storage/storagetest"
)

// Two instances on one Postgres. The first keeps a token it has verified: with the
// announcement of token changes held back, a revocation through the second leaves the
// first's reads served from memory, but not its writes, which check the token in their own
// transaction. Announced, a revocation empties the first's memory.
func TestTokenCacheAcrossInstances(t *testing.T) {
	ctx := context.Background()
	first, second := twoInstances(t)
	create := func(hash string) *storage.Token {
		tok, err := second.CreateToken(ctx, storage.NewToken{Identity: "ainotes:" + hash, SecretHash: hash, Rights: "read,write"})
		if err != nil {
			t.Fatal(err)
		}
		return tok
	}
	verify := func(hash string) error {
		_, err := first.TokenByHash(ctx, hash)
		return err
	}
	held, announced := create("held"), create("announced")
	start := time.Now()
	for !storage.TokenCacheServing(first) {
		if err := verify("held"); err != nil {
			t.Fatal(err)
		}
		if time.Since(start) > 10*time.Second {
			t.Fatal("the first instance did not listen for token changes within 10 s")
		}
		time.Sleep(10 * time.Millisecond)
	}
	for _, hash := range []string{"held", "announced"} {
		if err := verify(hash); err != nil { // kept from now on
			t.Fatal(err)
		}
	}

	if _, err := second.ExecContext(ctx, "ALTER TABLE tokens DISABLE TRIGGER tokens_announce"); err != nil {
		t.Fatal(err)
	}
	if err := second.RevokeToken(ctx, held.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := second.ExecContext(ctx, "ALTER TABLE tokens ENABLE TRIGGER tokens_announce"); err != nil {
		t.Fatal(err)
	}
	if err := verify("held"); err != nil {
		t.Fatalf("the unannounced revocation reached the first instance's memory (%v): is the token kept at all?", err)
	}
	for _, c := range []struct {
		name  string
		write func(f *storage.Forum) error
	}{
		{"CountWrite", func(f *storage.Forum) error {
			_, _, err := f.CountWrite(ctx, held.Identity, held.ID, storage.Now(), 100)
			return err
		}},
		{"WriteMessage", func(f *storage.Forum) error {
			now := storage.Now()
			th := &storage.Thread{Title: "Q", State: "open", StateOrigin: "llm", ConfirmedState: "open",
				Creator: held.Identity, CreatedAt: now, UpdatedAt: now}
			if err := f.OpenThread(ctx, th, held.Identity); err != nil {
				return err
			}
			m := &storage.Message{ThreadID: th.ID, Kind: "ask", Identity: held.Identity, AuthorKind: "llm",
				Body: "Q", CreatedAt: now, AwaitingMode: storage.AwaitingAny, AwaitingIdentity: held.Identity}
			th.MessageCount = 1
			return f.WriteMessage(ctx, storage.MessageWrite{Message: m, Thread: th, Opens: true,
				AwaitedBySelf: true, MoveInbox: true,
				Count: &storage.WriteCount{Identity: held.Identity, Token: held.ID, Now: now, Limit: 100}})
		}},
	} {
		if err := first.Write(ctx, func(_ context.Context, f *storage.Forum) error { return c.write(f) }); !errors.Is(err, storage.ErrRevoked) {
			t.Errorf("%s with the revoked token on the first instance: %v, want ErrRevoked", c.name, err)
		}
	}
	var threads int
	if err := first.NewRaw("SELECT count(*) FROM threads").Scan(ctx, &threads); err != nil || threads != 0 {
		t.Errorf("threads after the refused write: %d (%v), want 0", threads, err)
	}

	if err := second.RevokeToken(ctx, announced.ID); err != nil {
		t.Fatal(err)
	}
	start = time.Now()
	for !errors.Is(verify("announced"), storage.ErrRevoked) || !errors.Is(verify("held"), storage.ErrRevoked) {
		if time.Since(start) > 5*time.Second {
			t.Fatal("the first instance still verifies tokens revoked 5 s ago")
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Logf("the announcement emptied the first instance's memory %v after the revocation", time.Since(start))
}

// twoInstances opens two instances on one migrated Postgres database.
func twoInstances(t *testing.T) (first, second *storage.DB) {
	t.Helper()
	ctx := context.Background()
	url := storagetest.NewURL(t, storage.Postgres)
	var dbs [2]*storage.DB
	for i := range dbs {
		db, err := storage.Open(ctx, url)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		dbs[i] = db
	}
	if _, err := migrations.Up(ctx, dbs[0]); err != nil {
		t.Fatal(err)
	}
	return dbs[0], dbs[1]
}
