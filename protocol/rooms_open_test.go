package protocol_test

import (
	"context"
	"slices"
	"strings"
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

// An ask that names no room opens its thread in general (§ 16: "absent: rm_1"), whoever asks.
// A token scoped to other rooms is refused there as anywhere it does not reach — not_found,
// exactly as if general did not exist — and, since it named no room, the refusal names the
// rooms it reaches, to be named in the field room. A room it names and does not reach gets
// the plain refusal, and the rooms outside its reach are named nowhere.
func TestScopedAskWithoutRoomNamesTheRoomsItReaches(t *testing.T) {
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		ctx := context.Background()
		f := newRoomForum(t, db)
		team := scoped("team", "read,write", roomID(f.research))

		_, err := f.svc.Send(ctx, team, []byte(envelope("ask", "", "Where does this go?")))
		refusal := wantRefused(t, err, protocol.ReasonNotFound)
		if !strings.Contains(refusal.Message, "rm_1 not found") || !strings.Contains(refusal.Message, "research, inner") ||
			!strings.Contains(refusal.Message, "field room") || strings.Contains(refusal.Message, "ops") {
			t.Errorf("an ask without a room by a token of research reads %q; want general not found and the rooms research, inner to name", refusal.Message)
		}

		_, err = f.svc.Send(ctx, team, []byte(envelope("ask", "", "And in ops?", "room", "ops")))
		if refusal := wantRefused(t, err, protocol.ReasonNotFound); refusal.Message != "room ops not found" {
			t.Errorf("an ask naming ops, out of reach, reads %q; want the plain refusal", refusal.Message)
		}
		send(t, f.svc, team, envelope("ask", "", "In research, then?", "room", "research"))
		// A token that reaches general (or every room) still opens there without naming it.
		send(t, f.svc, scoped("wide", "read,write", 1, roomID(f.research)), envelope("ask", "", "In general?"))
		send(t, f.svc, agent("everywhere", "read,write"), envelope("ask", "", "Anywhere?"))
	})
}
