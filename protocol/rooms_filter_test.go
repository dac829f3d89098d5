package protocol_test

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/parleyforum/parley/protocol"
	"github.com/parleyforum/parley/storage"
	"github.com/parleyforum/parley/storage/storagetest"
)

// TestSearchByRoomFollowsAMove: search by room and within a scoped token's rooms finds a
// message in the room its thread is in now, not the one it was written in.
func TestSearchByRoomFollowsAMove(t *testing.T) {
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		f := newRoomForum(t, db)
		ctx := context.Background()
		th := f.inOps.Thread.ID
		found := func(a *protocol.Actor, room string) []string {
			t.Helper()
			req := map[string]any{"q": "queue"}
			if room != "" {
				req["room"] = room
			}
			res, err := f.svc.Search(ctx, a, []byte(jsonOf(req)))
			if err != nil {
				t.Fatalf("search in %q: %v", room, err)
			}
			var threads []string
			for _, h := range res.Results {
				threads = append(threads, h.Thread.ID)
			}
			return threads
		}
		inResearch := scoped("me", "read", roomID(f.research))
		for _, c := range []struct {
			a    *protocol.Actor
			room string
			want []string
		}{
			{reader, "ops", []string{th}},
			{reader, "research", nil},
			{reader, "inner", nil},
			{inResearch, "", nil},
		} {
			if got := found(c.a, c.room); !slices.Equal(got, c.want) {
				t.Errorf("before the move, %s searching in %q finds %v, want %v", c.a.Identity, c.room, got, c.want)
			}
		}
		if _, err := f.svc.MoveThread(ctx, f.admin, []byte(jsonOf(map[string]any{"thread": th, "room": "inner"}))); err != nil {
			t.Fatal(err)
		}
		for _, c := range []struct {
			a    *protocol.Actor
			room string
			want []string
		}{
			{reader, "ops", nil},
			{reader, "research", []string{th}}, // a room holds the rooms inside it
			{reader, "inner", []string{th}},
			{inResearch, "", []string{th}},
			{inResearch, "inner", []string{th}},
		} {
			if got := found(c.a, c.room); !slices.Equal(got, c.want) {
				t.Errorf("after the move, %s searching in %q finds %v, want %v", c.a.Identity, c.room, got, c.want)
			}
		}
	})
}

// TestListThreadsPagesAcrossRooms: a list within several rooms (list_threads, and the pages'
// list by last activity) — a room with the rooms
// inside it, or a token scoped to more than one — is read one room at a time and merged;
// paged by its cursor it gives every thread of those rooms once, newest first, and none of
// another room.
func TestListThreadsPagesAcrossRooms(t *testing.T) {
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		f := newRoomForum(t, db)
		ctx := context.Background()
		f.room(t, `{"name":"north","title":"North"}`)
		asker := agent("asker", "read,write")
		rooms := []string{"research", "inner", "general", "north", "inner", "research", "inner"}
		inResearch := []string{f.inInner.Thread.ID, f.inResearch.Thread.ID} // with inner
		inInner := []string{f.inInner.Thread.ID}
		inInnerOrNorth := []string{f.inInner.Thread.ID}
		for i, room := range rooms {
			id := send(t, f.svc, asker, envelope("ask", "", fmt.Sprintf("Question %d in %s?", i, room), "room", room)).Thread.ID
			switch room {
			case "research":
				inResearch = append(inResearch, id)
			case "inner":
				inResearch = append(inResearch, id)
				inInner = append(inInner, id)
				inInnerOrNorth = append(inInnerOrNorth, id)
			case "north":
				inInnerOrNorth = append(inInnerOrNorth, id)
			}
		}
		newestFirst := func(ids []string) []string {
			out := slices.Clone(ids)
			slices.SortFunc(out, func(a, b string) int {
				x, _ := protocol.ParseIDString(a, "th_")
				y, _ := protocol.ParseIDString(b, "th_")
				return int(y - x)
			})
			return out
		}
		north, err := f.svc.ListRooms(ctx, f.admin, []byte(`{}`))
		if err != nil {
			t.Fatal(err)
		}
		var northID int64
		for _, r := range north.Rooms {
			if r.Name == "north" {
				northID, _ = protocol.ParseIDString(r.ID, "rm_")
			}
		}
		for _, c := range []struct {
			name string
			a    *protocol.Actor
			room string
			want []string
		}{
			{"research and inner", reader, "research", newestFirst(inResearch)},
			{"a token scoped to inner and north", scoped("two", "read", roomID(f.inner), northID), "", newestFirst(inInnerOrNorth)},
			{"a token scoped to research, in inner", scoped("one", "read", roomID(f.research)), "inner", newestFirst(inInner)},
		} {
			for _, limit := range []int{1, 2, 3, 50} {
				var got []string
				req := map[string]any{"limit": limit}
				if c.room != "" {
					req["room"] = c.room
				}
				for pages := 0; pages < 20; pages++ {
					res, err := f.svc.ListThreads(ctx, c.a, []byte(jsonOf(req)))
					if err != nil {
						t.Fatalf("%s: %v", c.name, err)
					}
					for _, th := range res.Threads {
						got = append(got, th.ID)
					}
					if !res.More {
						break
					}
					req["cursor"] = *res.Cursor
				}
				if !slices.Equal(got, c.want) {
					t.Errorf("%s, pages of %d: %v, want %v", c.name, limit, got, c.want)
				}
				// The pages' list, by last activity, is read the same way: every thread
				// here was last written when it was opened, so the order is the same.
				got = nil
				q := protocol.BrowseQuery{Limit: limit, Room: c.room}
				for pages := 0; pages < 20; pages++ {
					res, err := f.svc.Browse(ctx, c.a, q)
					if err != nil {
						t.Fatalf("%s: browse: %v", c.name, err)
					}
					for _, th := range res.Threads {
						got = append(got, th.ID)
					}
					if !res.More {
						break
					}
					q.Cursor = *res.Cursor
				}
				if !slices.Equal(got, c.want) {
					t.Errorf("%s, browsed in pages of %d: %v, want %v", c.name, limit, got, c.want)
				}
			}
		}
	})
}

// TestSearchIndexHoldsEachMessagesRoom: on SQLite the search index holds the room of each
// message's thread (the search_rooms migration), and stays equal to what the messages and
// their threads hold — FTS5's integrity check compares the two — through new threads in
// rooms, replies, a hidden message and moves there and back. A word is found in the body
// only: the room's own word, r<id>, finds nothing that does not say it.
func TestSearchIndexHoldsEachMessagesRoom(t *testing.T) {
	db := storagetest.Open(t, storage.SQLite)
	f := newRoomForum(t, db)
	ctx := context.Background()
	asker, other := agent("asker", "read,write"), agent("other", "read,write")
	send(t, f.svc, other, envelope("answer", f.inResearch.Thread.ID, "Research finds the queue."))
	hidden := send(t, f.svc, other, envelope("note", f.inInner.Thread.ID, "A queue note to hide."))
	if _, err := f.svc.Hide(ctx, f.admin, []byte(jsonOf(map[string]any{"message": hidden.Message.ID, "reason": "test"}))); err != nil {
		t.Fatal(err)
	}
	check := func(when string) {
		t.Helper()
		if _, err := db.ExecContext(ctx, `INSERT INTO messages_fts (messages_fts, rank) VALUES ('integrity-check', 1)`); err != nil {
			t.Fatalf("%s: the search index differs from the messages and their rooms: %v", when, err)
		}
	}
	check("after the sends")
	for _, move := range []struct{ thread, room string }{
		{f.inResearch.Thread.ID, "ops"}, {f.inInner.Thread.ID, "general"}, {f.inResearch.Thread.ID, "research"},
	} {
		if _, err := f.svc.MoveThread(ctx, f.admin, []byte(jsonOf(map[string]any{"thread": move.thread, "room": move.room}))); err != nil {
			t.Fatal(err)
		}
		check("after moving " + move.thread + " to " + move.room)
	}
	roomWord := fmt.Sprintf("r%d", roomID(f.research))
	res, err := f.svc.Search(ctx, asker, []byte(jsonOf(map[string]any{"q": roomWord})))
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Results) != 0 {
		t.Errorf("searching for %s, the research room's word in the index, finds %d messages, want none", roomWord, len(res.Results))
	}
	said := send(t, f.svc, asker, envelope("ask", "", "Who says "+roomWord+"?", "room", "ops"))
	res, err = f.svc.Search(ctx, asker, []byte(jsonOf(map[string]any{"q": roomWord})))
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Results) != 1 || res.Results[0].Message.ID != said.Message.ID {
		t.Errorf("searching for %s finds %+v, want only %s, which says it", roomWord, res.Results, said.Message.ID)
	}
	check("at the end")
}
