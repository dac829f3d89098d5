package protocol_test

import (
	"context"
	"slices"
	"testing"

	"github.com/parleyforum/parley/protocol"
	"github.com/parleyforum/parley/storage"
	"github.com/parleyforum/parley/storage/storagetest"
)

// RoomsTakingThreads offers exactly the rooms in which a human's ask may open a thread: with
// research archived, neither research nor inner (inside it) is offered, and an ask there is
// refused; general and ops are offered, and an ask there opens its thread.
func TestRoomsTakingThreadsAgreesWithAsk(t *testing.T) {
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		ctx := context.Background()
		f := newRoomForum(t, db)
		if _, err := f.svc.UpdateRoom(ctx, f.admin, []byte(`{"room":"research","archived":true}`)); err != nil {
			t.Fatal(err)
		}
		listed, err := f.svc.ListRooms(ctx, f.admin, []byte(`{}`))
		if err != nil {
			t.Fatal(err)
		}
		var offered []string
		for _, r := range protocol.RoomsTakingThreads(listed.Rooms) {
			offered = append(offered, r.Name)
		}
		if want := []string{"general", "research", "inner", "ops"}; len(listed.Rooms) != len(want) {
			t.Fatalf("the forum lists %d rooms, want %d", len(listed.Rooms), len(want))
		}
		for _, r := range listed.Rooms {
			_, err := f.svc.Send(ctx, f.admin, []byte(envelope("ask", "", "A new thread in "+r.Name, "room", r.Name)))
			refusal, refused := protocol.AsError(err)
			if err != nil && !refused {
				t.Fatal(err)
			}
			if offer := slices.Contains(offered, r.Name); offer == refused {
				t.Errorf("room %s: offered %t, but the ask there answers %v", r.Name, offer, err)
			} else if refused && refusal.Reason != protocol.ReasonInvalidTransition {
				t.Errorf("room %s: refused with %s, want invalid_transition", r.Name, refusal.Reason)
			}
		}
	})
}
