package protocol_test

import (
	"context"
	"testing"

	"github.com/parleyforum/parley/protocol"
	"github.com/parleyforum/parley/storage"
	"github.com/parleyforum/parley/storage/storagetest"
)

// § 7: reading a thread gives its messages as a tree nested by parent, siblings in order of
// creation; the list of threads filters by state and pages with an opaque cursor.

func TestReadThreadTree(t *testing.T) {
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		ctx := context.Background()
		svc := newService(t, db)
		alice := agent("alice", "read,write")
		bob := agent("bob", "read,write")
		carol := agent("carol", "read,write")
		root := send(t, svc, alice, envelope("ask", "", "root"))
		th := root.Thread.ID
		a := send(t, svc, bob, envelope("answer", th, "a"))
		b := send(t, svc, carol, envelope("note", th, "b"))
		a1 := send(t, svc, alice, envelope("ask", "", "a1", "parent", a.Message.ID))
		c := send(t, svc, carol, envelope("note", th, "c"))
		a2 := send(t, svc, carol, envelope("note", "", "a2", "parent", a.Message.ID))
		a11 := send(t, svc, bob, envelope("answer", "", "a11", "parent", a1.Message.ID))

		res := readThread(t, svc, th)
		shape := func(ms []*protocol.MessageView) []string {
			var out []string
			for _, m := range ms {
				out = append(out, m.ID)
			}
			return out
		}
		if len(res.Messages) != 1 || res.Messages[0].ID != root.Message.ID {
			t.Fatalf("roots: %v", shape(res.Messages))
		}
		r := res.Messages[0]
		if got, want := shape(r.Replies), []string{a.Message.ID, b.Message.ID, c.Message.ID}; jsonOf(got) != jsonOf(want) {
			t.Fatalf("root's replies %v, want %v", got, want)
		}
		if got, want := shape(r.Replies[0].Replies), []string{a1.Message.ID, a2.Message.ID}; jsonOf(got) != jsonOf(want) {
			t.Fatalf("a's replies %v, want %v", got, want)
		}
		if got := r.Replies[0].Replies[0].Replies; len(got) != 1 || got[0].ID != a11.Message.ID || *got[0].Parent != a1.Message.ID {
			t.Fatalf("a1's replies %v", shape(got))
		}
		if res.Thread.MessageCount != 7 || res.Claims == nil {
			t.Fatalf("thread %s, claims %v", jsonOf(res.Thread), res.Claims)
		}

		for _, body := range []string{`{}`, `{"thread":"msg_1"}`, `{"thread":"th_1","x":1}`} {
			_, err := svc.ReadThread(ctx, reader, []byte(body))
			wantRefused(t, err, protocol.ReasonInvalidBody)
		}
		_, err := svc.ReadThread(ctx, reader, []byte(`{"thread":"th_999"}`))
		wantRefused(t, err, protocol.ReasonNotFound)
		_, err = svc.ReadThread(ctx, nil, []byte(`{"thread":"th_1"}`))
		wantRefused(t, err, protocol.ReasonUnauthenticated)
		_, err = svc.ReadThread(ctx, agent("w", "write"), []byte(`{"thread":"th_1"}`))
		wantRefused(t, err, protocol.ReasonTokenRightMissing)
	})
}

func TestListThreadsByState(t *testing.T) {
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		ctx := context.Background()
		svc := newService(t, db)
		alice := agent("alice", "read,write")
		bob := agent("bob", "read,write")
		byState := map[protocol.State][]string{}
		for i := range 3 {
			th := send(t, svc, alice, envelope("ask", "", "open "+itoa(i))).Thread.ID
			byState[protocol.StateOpen] = append([]string{th}, byState[protocol.StateOpen]...)
			th = send(t, svc, alice, envelope("ask", "", "answered "+itoa(i))).Thread.ID
			send(t, svc, bob, envelope("answer", th, "answer"))
			byState[protocol.StateAnswered] = append([]string{th}, byState[protocol.StateAnswered]...)
		}
		th := send(t, svc, alice, envelope("ask", "", "deferred")).Thread.ID
		send(t, svc, alice, envelope("defer", th, "later"))
		byState[protocol.StateDeferred] = []string{th}
		for _, s := range protocol.AllStates() {
			var got []string
			req := map[string]any{"state": s, "limit": 2}
			for {
				page, err := svc.ListThreads(ctx, reader, []byte(jsonOf(req)))
				if err != nil {
					t.Fatalf("list %s: %v", s, err)
				}
				for _, tv := range page.Threads {
					if tv.State != s {
						t.Fatalf("list %s gives a %s thread", s, tv.State)
					}
					got = append(got, tv.ID)
				}
				if !page.More {
					break
				}
				req["cursor"] = *page.Cursor
			}
			if jsonOf(got) != jsonOf(byState[s]) && !(len(got) == 0 && len(byState[s]) == 0) {
				t.Errorf("list %s: %v, want %v (newest first)", s, got, byState[s])
			}
		}
		for _, body := range []string{`{"state":"closed, confirmed"}`, `{"state":"Open"}`, `{"cursor":"x"}`, `{"cursor":"aTEuMC4x"}`, `{"page":2}`} {
			_, err := svc.ListThreads(ctx, reader, []byte(body))
			wantRefused(t, err, protocol.ReasonInvalidBody)
		}
	})
}
