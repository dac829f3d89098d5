package reputation_test

import (
	"context"
	"testing"

	"github.com/parleyforum/parley/protocol"
	"github.com/parleyforum/parley/reputation"
	"github.com/parleyforum/parley/storage"
	"github.com/parleyforum/parley/storage/storagetest"
)

// Only what the caller may read counts (§ 17): a token scoped to rooms counts the acts in
// those rooms alone, and an identity that acted only elsewhere is not found by it.
func TestRecordKeepsToTheCallersRooms(t *testing.T) {
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		svc := protocol.New(db, protocol.Options{})
		rep := reputation.New(svc, reputation.Options{})
		alice := actor("alice", "read,write")
		if _, err := svc.Send(context.Background(), alice, []byte(`{"kind":"ask","body":"Which port?"}`)); err != nil {
			t.Fatal(err)
		}
		in := []byte(`{"identity":"ainotes:alice"}`)
		everywhere, err := rep.ReadIdentity(context.Background(), actor("reader", "read"), in)
		if err != nil || everywhere.Record.ThreadsOpened != 1 {
			t.Fatalf("a reader of every room: %+v, %v", everywhere, err)
		}
		elsewhere := actor("scoped", "read")
		elsewhere.Rooms = []int64{999999} // a room that holds none of alice's threads
		_, err = rep.ReadIdentity(context.Background(), elsewhere, in)
		if refusal, ok := protocol.AsError(err); !ok || refusal.Reason != protocol.ReasonNotFound {
			t.Errorf("a reader of another room: %v, want not_found", err)
		}
		res, err := rep.Ranked(context.Background(), elsewhere, reputation.OrderReliability, "", 100)
		if err != nil || len(res.Identities) != 0 {
			t.Errorf("a reader of another room ranks %d identities (%v), want none", len(res.Identities), err)
		}
	})
}

// The forum's health keeps to the reader's rooms as well: a proposal in a room the reader
// does not reach is not counted, nor is its thread listed as waiting; a period the page does
// not offer is refused.
func TestHealthKeepsToTheCallersRooms(t *testing.T) {
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		ctx := context.Background()
		svc := protocol.New(db, protocol.Options{})
		rep := reputation.New(svc, reputation.Options{})
		asked, err := svc.Send(ctx, actor("alice", "read,write"), []byte(`{"kind":"ask","body":"Which port?"}`))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := svc.Send(ctx, actor("bob", "read,write"), []byte(`{"kind":"answer","thread":"`+asked.Thread.ID+`","body":"8080."}`)); err != nil {
			t.Fatal(err)
		}
		everywhere, err := rep.Health(ctx, actor("reader", "read"), reputation.PeriodAll)
		if err != nil || everywhere.Proposals.Open != 1 || len(everywhere.Waiting) != 1 {
			t.Fatalf("a reader of every room: %+v, %v", everywhere, err)
		}
		elsewhere := actor("scoped", "read")
		elsewhere.Rooms = []int64{999999}
		h, err := rep.Health(ctx, elsewhere, reputation.PeriodAll)
		if err != nil || h.Proposals.Total() != 0 || len(h.Waiting) != 0 {
			t.Errorf("a reader of another room: %+v, %v", h, err)
		}
		_, err = rep.Health(ctx, actor("reader", "read"), "year")
		if refusal, ok := protocol.AsError(err); !ok || refusal.Reason != protocol.ReasonInvalidBody {
			t.Errorf("period=year: %v, want invalid_body", err)
		}
	})
}
