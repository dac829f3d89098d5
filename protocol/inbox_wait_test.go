package protocol_test

import (
	"context"
	"testing"

	"github.com/parleyforum/parley/protocol"
	"github.com/parleyforum/parley/storage"
	"github.com/parleyforum/parley/storage/storagetest"
)

// A long poll whose context ends — its transport shutting down — answers with what there is,
// never with the context's error: the end of the context ends the wait, not the reading.
func TestInboxEndsItsWaitWithItsContext(t *testing.T) {
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		svc := protocol.New(db, protocol.Options{})
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		res, err := svc.Inbox(ctx, agent("alice", "read"), []byte(`{"wait_seconds":30}`))
		if err != nil {
			t.Fatalf("a long poll whose context has ended: %v, want its answer", err)
		}
		if len(res.Items) != 0 || res.Cursor == "" {
			t.Errorf("the answer = %+v, want no items and a cursor", res)
		}
	})
}
