package protocol_test

import (
	"context"
	"testing"

	"github.com/parleyforum/parley/protocol"
	"github.com/parleyforum/parley/storage"
	"github.com/parleyforum/parley/storage/storagetest"
)

// § 19 "Replays keep their scope": the first answer under a key is given only to a caller
// who could make the same request now — the same identity, through a token with the rights
// and the rooms the request needs; any other token of that identity is answered as a new
// request would be, and nothing is written either way.
func TestReplayKeepsItsScope(t *testing.T) {
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		f := newRoomForum(t, db)
		svc := f.svc
		alpha, beta := roomID(f.research), roomID(f.ops)
		alice := agent("alice", "read,write")
		ask := envelope("ask", "", "What does beta hold?", "room", "ops")
		first, err := keyed(svc, alice, "ask-beta", "send", ask, sendOp(svc))
		if err != nil {
			t.Fatal(err)
		}
		opened := first.(*protocol.SendResult).Thread.ID

		for _, tc := range []struct {
			name   string
			caller *protocol.Actor
			want   protocol.Reason // "": the first answer
		}{
			{"the writer's token", alice, ""},
			{"a token of alice's scoped to beta", scoped("alice", "read,write", beta), ""},
			{"a token of alice's with more rights", agent("alice", "read,write,lock"), ""},
			{"a read token of alice's scoped to alpha", scoped("alice", "read", alpha), protocol.ReasonTokenRightMissing},
			{"a read token of alice's", agent("alice", "read"), protocol.ReasonTokenRightMissing},
			{"a write token of alice's scoped to alpha", scoped("alice", "read,write", alpha), protocol.ReasonNotFound},
		} {
			res, err := keyed(svc, tc.caller, "ask-beta", "send", ask, sendOp(svc))
			if tc.want == "" {
				if _, ok := res.(*protocol.Replayed); err != nil || !ok {
					t.Errorf("%s resends: %T %v, want the first answer", tc.name, res, err)
				}
				continue
			}
			if err == nil {
				t.Errorf("%s resends: %T, want %s as a new request", tc.name, res, tc.want)
				continue
			}
			if e := refusal(t, err); e.Reason != tc.want {
				t.Errorf("%s resends: %s (%s), want %s as a new request", tc.name, e.Reason, e.Message, tc.want)
			}
		}
		threads, err := svc.ListThreads(context.Background(), reader, []byte(`{"room":"ops"}`))
		if err != nil {
			t.Fatal(err)
		}
		if n := len(threads.Threads); n != 2 { // the fixture's and alice's
			t.Errorf("room ops has %d threads after the resends, want 2", n)
		}

		// What the first write changed still answers with the first answer — to a caller with
		// the rights of its writer. A moderator of alice's closes the thread; her token without
		// lock, which has no authority over it, is answered as a new close would be.
		moderator := agent("alice", "read,write,lock")
		send(t, svc, moderator, envelope("decide", f.inGen.Thread.ID, "Decided by the moderator."))
		closeIt := envelope("close", f.inGen.Thread.ID, "Closed by the moderator.")
		if _, err := keyed(svc, moderator, "close-gen", "send", closeIt, sendOp(svc)); err != nil {
			t.Fatal(err)
		}
		if res, err := keyed(svc, moderator, "close-gen", "send", closeIt, sendOp(svc)); err != nil {
			t.Errorf("the moderator's retry of a close: %v, want the first answer", err)
		} else if _, ok := res.(*protocol.Replayed); !ok {
			t.Errorf("the moderator's retry of a close: %T, want the first answer", res)
		}
		_, err = keyed(svc, alice, "close-gen", "send", closeIt, sendOp(svc))
		wantRefused(t, err, protocol.ReasonThreadClosed)

		// A key kept before keys kept their caller replays only to a request that passes every
		// check again: bob's retried answer is his own self_reply now.
		bob := agent("bob", "read,write")
		answer := envelope("answer", opened, "Beta holds the ops queue.")
		if _, err := keyed(svc, bob, "answer-old", "send", answer, sendOp(svc)); err != nil {
			t.Fatal(err)
		}
		if _, err := db.NewRaw(`UPDATE idempotency_keys SET caller = '' WHERE key = 'answer-old'`).Exec(context.Background()); err != nil {
			t.Fatal(err)
		}
		_, err = keyed(svc, bob, "answer-old", "send", answer, sendOp(svc))
		wantRefused(t, err, protocol.ReasonSelfReply)
		if n := thread(t, svc, opened).MessageCount; n != 2 {
			t.Errorf("the thread has %d messages after the retries, want 2", n)
		}
	})
}
