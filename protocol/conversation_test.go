package protocol_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/parleyforum/parley/protocol"
	"github.com/parleyforum/parley/storage"
	"github.com/parleyforum/parley/storage/storagetest"
)

// A whole conversation through the operation layer: ask, answer, decide, confirm, close.
func TestConversation(t *testing.T) {
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		ctx := context.Background()
		svc := protocol.New(db, protocol.Options{})
		alice := agent("alice", "read,write")
		bob := agent("bob", "read,write")
		mod := agent("mod", "read,write,lock")

		asked := send(t, svc, alice, `{"kind":"ask","body":"Which port does the server use?"}`)
		if asked.Thread.State != protocol.StateOpen || asked.Thread.Title == nil || *asked.Thread.Title != "Which port does the server use?" {
			t.Fatalf("new thread: %+v", asked.Thread)
		}
		th := asked.Thread.ID
		answered := send(t, svc, bob, `{"kind":"answer","thread":"`+th+`","body":"8080 by default."}`)
		if answered.Thread.State != protocol.StateAnswered || answered.Thread.StateConfirmedAt != nil {
			t.Fatalf("answer should propose answered: %+v", answered.Thread)
		}
		if *answered.Message.Parent != asked.Message.ID {
			t.Fatalf("answer parent = %v, want %s", *answered.Message.Parent, asked.Message.ID)
		}
		if aw := answered.Thread.Awaiting; aw == nil || aw.To == nil || aw.To.Identity != alice.Identity {
			t.Fatalf("after the answer the asker's turn: %+v", aw)
		}
		inboxWant(t, svc, alice, nil, th)
		_, err := svc.Send(ctx, bob, []byte(`{"kind":"decide","thread":"`+th+`","body":"8080"}`))
		if e, ok := protocol.AsError(err); !ok || e.Reason != protocol.ReasonThreadAuthorityMissing {
			t.Fatalf("bob may not decide: %v", err)
		}
		send(t, svc, alice, `{"kind":"decide","thread":"`+th+`","body":"We keep 8080."}`)
		conf, err := svc.Confirm(ctx, mod, []byte(`{"thread":"`+th+`"}`))
		if err != nil || conf.Thread.StateConfirmedAt == nil || conf.Event.Act != "confirm" {
			t.Fatalf("confirm: %+v %v", conf, err)
		}
		closed := send(t, svc, mod, `{"kind":"close","thread":"`+th+`","body":"Done."}`)
		if !closed.Thread.Locked {
			t.Fatalf("a lock holder's close locks: %+v", closed.Thread)
		}
		_, err = svc.Send(ctx, bob, []byte(`{"kind":"note","thread":"`+th+`","body":"late"}`))
		if e, ok := protocol.AsError(err); !ok || e.Reason != protocol.ReasonThreadClosed {
			t.Fatalf("closed thread: %v", err)
		}
		read, err := svc.ReadThread(ctx, alice, []byte(`{"thread":"`+th+`"}`))
		if err != nil || len(read.Messages) != 1 || len(read.Messages[0].Replies) != 3 {
			b, _ := json.MarshalIndent(read, "", " ")
			t.Fatalf("read: %s %v", b, err)
		}
		evs, err := svc.ReadEvents(ctx, alice, []byte(`{"thread":"`+th+`"}`))
		if err != nil || len(evs.Events) != 5 {
			b, _ := json.MarshalIndent(evs, "", " ")
			t.Fatalf("events: %s %v", b, err)
		}
		if !evs.Events[2].Confirmed || evs.Events[3].Act != "confirm" {
			t.Fatalf("the decide event reads confirmed after the confirm: %+v", evs.Events)
		}
	})
}
