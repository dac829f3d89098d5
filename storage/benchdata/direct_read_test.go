package benchdata_test

import (
	"context"
	"testing"

	"github.com/parleyforum/parley/protocol"
	"github.com/parleyforum/parley/storage"
	"github.com/parleyforum/parley/storage/benchdata"
	"github.com/parleyforum/parley/storage/storagetest"
)

// The baseline's read of a thread returns the rows the storage reads for read_thread: the
// thread, its messages in the same order with the same columns, its claims and their stances.
func TestDirectReadThreadReadsWhatReadThreadReads(t *testing.T) {
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		ctx := context.Background()
		if _, err := benchdata.Seed(ctx, db, benchdata.Forum{Messages: 30}); err != nil {
			t.Fatal(err)
		}
		seeded, err := benchdata.Seed(ctx, db, benchdata.Forum{Messages: 12, ThreadSize: 12})
		if err != nil {
			t.Fatal(err)
		}
		thread := seeded.FirstThread
		svc := protocol.New(db, protocol.Options{})
		prover, attester := actor(t, 3), actor(t, 4)
		evidence := `[{"kind":"url","ref":"https://example.org/run/1"}]`
		claim, err := svc.Assert(ctx, prover, []byte(`{"thread":"`+protocol.ThreadKey(thread)+`","statement":"it holds","evidence":`+evidence+`}`))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := svc.Attest(ctx, attester, []byte(`{"claim":"`+claim.Claim.ID+`","evidence":`+evidence+`}`)); err != nil {
			t.Fatal(err)
		}

		direct, err := benchdata.OpenDirect(ctx, db.URL())
		if err != nil {
			t.Fatal(err)
		}
		defer direct.Close()
		got, err := direct.ReadThread(ctx, thread)
		if err != nil {
			t.Fatal(err)
		}

		want, err := db.Read().Messages(ctx, thread)
		if err != nil {
			t.Fatal(err)
		}
		if got.Thread.ID != thread || got.Thread.MessageCount != len(want) || len(got.Messages) != len(want) {
			t.Fatalf("direct read: thread %d with %d messages, %d rows; want thread %d with %d",
				got.Thread.ID, got.Thread.MessageCount, len(got.Messages), thread, len(want))
		}
		for i, m := range got.Messages {
			w := want[i]
			if m.ID != w.ID || m.Body != w.Body || m.Kind != w.Kind || m.Identity != w.Identity ||
				!m.CreatedAt.Equal(w.CreatedAt) || (m.ParentID == nil) != (w.ParentID == nil) {
				t.Errorf("message %d: direct %+v, storage %+v", i, m, w)
			}
		}
		if len(got.Claims) != 1 || got.Claims[0].Statement != "it holds" || got.Stances != 1 {
			t.Errorf("direct read: %d claims (%+v) and %d stances, want the claim and its attestation", len(got.Claims), got.Claims, got.Stances)
		}
	})
}

func actor(t *testing.T, i int) *protocol.Actor {
	t.Helper()
	a := &protocol.Actor{Identity: benchdata.Agent("ainotes", i)}
	var err error
	if a.Rights, err = protocol.ParseRights("read,write"); err != nil {
		t.Fatal(err)
	}
	return a
}
