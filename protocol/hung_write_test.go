package protocol_test

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"testing"
	"time"

	"github.com/parleyforum/parley/protocol"
	"github.com/parleyforum/parley/storage"
	"github.com/parleyforum/parley/storage/storagetest"
)

// hungDatabase is a migrated database that the test can make hang: on Postgres a proxy that
// stops forwarding (connections stay open, nothing answers); on SQLite another connection
// that holds the write lock (every writer waits on it).
type hungDatabase struct {
	db           *storage.DB
	hang, answer func()
}

// eachHung runs fn on both databases, each with a way to make it hang.
func eachHung(t *testing.T, fn func(t *testing.T, h hungDatabase)) {
	t.Run("sqlite", func(t *testing.T) {
		db := storagetest.Open(t, storage.SQLite)
		var tx interface{ Rollback() error }
		fn(t, hungDatabase{db: db,
			hang: func() {
				conn, err := db.Conn(context.Background())
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { conn.Close() })
				btx, err := conn.BeginTx(context.Background(), nil) // BEGIN IMMEDIATE: the write lock
				if err != nil {
					t.Fatal(err)
				}
				tx = btx
			},
			answer: func() { _ = tx.Rollback() },
		})
	})
	t.Run("postgres", func(t *testing.T) {
		db, p := storagetest.OpenProxied(t, storage.Options{})
		fn(t, hungDatabase{db: db, hang: p.Freeze, answer: p.Thaw})
	})
}

// Every write is bounded by the request's deadline: with the database hung, each write is
// answered unavailable soon after the deadline (its commit is never sent), and when the
// database answers again, none of them was written.
func TestHungDatabaseBoundsEveryWrite(t *testing.T) {
	eachHung(t, func(t *testing.T, h hungDatabase) {
		const deadline = 300 * time.Millisecond
		svc := protocol.New(h.db, protocol.Options{Limits: generous(), Deadline: deadline})
		alice, bob := agent("alice", "read,write"), agent("bob", "read,write,verify")
		th := send(t, svc, alice, envelope("ask", "", "Does the build pass?")).Thread.ID
		claim := mustClaim(t, svc, alice, "assert", `{"thread":"`+th+`","statement":"the build passes","evidence":`+proof+`}`).ID
		pub, _, err := ed25519.GenerateKey(rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		key := base64.StdEncoding.EncodeToString(pub)
		before := readThread(t, svc, th)

		writes := []struct {
			name string
			run  func(ctx context.Context) error
		}{
			{"send", func(ctx context.Context) error {
				_, err := svc.Send(ctx, bob, []byte(envelope("answer", th, "Yes.")))
				return err
			}},
			{"open", func(ctx context.Context) error {
				_, err := svc.Send(ctx, bob, []byte(envelope("ask", "", "A new thread?")))
				return err
			}},
			{"confirm", func(ctx context.Context) error {
				_, err := svc.Confirm(ctx, human("ada"), []byte(`{"thread":"`+th+`"}`))
				return err
			}},
			{"mark", func(ctx context.Context) error {
				_, err := svc.Mark(ctx, human("ada"), []byte(`{"thread":"`+th+`","state":"decided"}`))
				return err
			}},
			{"claim_assert", func(ctx context.Context) error {
				_, err := svc.Assert(ctx, bob, []byte(`{"thread":"`+th+`","statement":"it does not","evidence":`+proof+`}`))
				return err
			}},
			{"claim_attest", func(ctx context.Context) error {
				_, err := svc.Attest(ctx, bob, []byte(`{"claim":"`+claim+`","evidence":`+proof+`}`))
				return err
			}},
			{"claim_refute", func(ctx context.Context) error {
				_, err := svc.Refute(ctx, bob, []byte(`{"claim":"`+claim+`","body":"it fails","evidence":`+proof+`}`))
				return err
			}},
			{"claim_verify", func(ctx context.Context) error {
				_, err := svc.Verify(ctx, bob, []byte(`{"claim":"`+claim+`"}`))
				return err
			}},
			{"claim_mark", func(ctx context.Context) error {
				_, err := svc.MarkClaim(ctx, human("ada"), []byte(`{"claim":"`+claim+`","state":"refuted"}`))
				return err
			}},
			{"artifact_put", func(ctx context.Context) error {
				_, err := svc.PutArtifact(ctx, bob, []byte("the log"), "text/plain")
				return err
			}},
			{"key_register", func(ctx context.Context) error {
				_, err := svc.RegisterKey(ctx, bob, []byte(`{"public_key":"`+key+`"}`))
				return err
			}},
		}

		h.hang()
		for _, w := range writes {
			ctx, cancel := svc.Bounded(context.Background())
			start := time.Now()
			done := make(chan error, 1)
			go func() { done <- w.run(ctx) }()
			select {
			case err := <-done:
				took := time.Since(start)
				if e, ok := protocol.AsError(err); !ok || e.Reason != protocol.ReasonUnavailable {
					t.Errorf("%s with the database hung: %v, want unavailable", w.name, err)
				}
				t.Logf("%s: %v in %v", w.name, err, took)
				if took > deadline+storage.CommitGrace+time.Second {
					t.Errorf("%s with the database hung took %v; the deadline is %v", w.name, took, deadline)
				}
			case <-time.After(20 * time.Second):
				t.Errorf("%s with the database hung: no answer after 20 s (the deadline is %v)", w.name, deadline)
			}
			cancel()
		}
		h.answer()

		// Nothing of it was written.
		after := readThread(t, svc, th)
		if len(after.Messages) != len(before.Messages) || after.Thread.State != before.Thread.State ||
			len(after.Claims) != len(before.Claims) {
			t.Errorf("a write answered unavailable was written: before %d messages %s %d claims, after %d %s %d",
				len(before.Messages), before.Thread.State, len(before.Claims), len(after.Messages), after.Thread.State, len(after.Claims))
		}
		if c := mustClaim(t, svc, reader, "read", `{"claim":"`+claim+`"}`); len(c.Attestations)+len(c.Refutations)+len(c.Verifications) != 0 || c.State != protocol.ClaimUnverified {
			t.Errorf("a stance answered unavailable was written: %+v", c)
		}
		if _, err := svc.GetArtifact(context.Background(), reader, []byte(`{"ref":"`+protocol.ArtifactRef([]byte("the log"))+`"}`)); err == nil {
			t.Errorf("an artifact answered unavailable was stored")
		}
		// And the database serves writes again.
		send(t, svc, bob, envelope("answer", th, "Yes."))
	})
}
