package protocol_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/parleyforum/parley/protocol"
	"github.com/parleyforum/parley/storage"
	"github.com/parleyforum/parley/storage/storagetest"
)

// TestReadThreadIsOneSnapshot reads a thread while two others write to it: every read's
// message_count is the tree it returns. Read in two statements, a message committed between
// them was in the tree but not in the count (found by the soak run, docs/reliability.md).
func TestReadThreadIsOneSnapshot(t *testing.T) {
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		ctx := context.Background()
		svc := newService(t, db)
		alice := agent("alice", "read,write")
		root := send(t, svc, alice, envelope("ask", "", "What does a read see while others write?"))
		th := root.Thread.ID
		const writes = 120
		var wg sync.WaitGroup
		done := make(chan struct{})
		for w, handle := range []string{"bob", "carol"} {
			writer := agent(handle, "read,write")
			wg.Go(func() {
				for i := range writes / 2 {
					env := envelope("note", th, fmt.Sprintf("note %d of writer %d", i, w), "parent", root.Message.ID)
					if _, err := svc.Send(ctx, writer, []byte(env)); err != nil {
						t.Errorf("send: %v", err)
						return
					}
				}
			})
		}
		go func() { wg.Wait(); close(done) }()
		reads, torn := 0, 0
		for finished := false; !finished; {
			select {
			case <-done:
				finished = true // one more read after the last write
			default:
			}
			res, err := svc.ReadThread(ctx, reader, []byte(`{"thread":"`+th+`"}`))
			if err != nil {
				t.Fatal(err)
			}
			reads++
			if n := treeSize(res.Messages); n != res.Thread.MessageCount {
				torn++
				t.Errorf("read %d: message_count %d, but %d messages in the tree", reads, res.Thread.MessageCount, n)
			}
		}
		if res := readThread(t, svc, th); res.Thread.MessageCount != writes+1 {
			t.Errorf("after the writes: message_count %d, want %d", res.Thread.MessageCount, writes+1)
		}
		t.Logf("%d reads beside the writes, %d torn", reads, torn)
	})
}

func treeSize(ms []*protocol.MessageView) int {
	n := 0
	for _, m := range ms {
		n += 1 + treeSize(m.Replies)
	}
	return n
}
