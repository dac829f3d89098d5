package protocol_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/parleyforum/parley/protocol"
	"github.com/parleyforum/parley/storage"
	"github.com/parleyforum/parley/storage/storagetest"
)

// § 16: rooms, the scope of a token and the rules by name.

// roomForum is a forum split into rooms: research (with inner inside it), ops, and general
// from the migration, one thread in each, a claim in each, a question awaiting anyone.
type roomForum struct {
	svc                               *protocol.Service
	admin                             *protocol.Actor
	research, inner, ops              *protocol.RoomView
	inResearch, inInner, inOps, inGen *protocol.SendResult
	opsClaim                          *protocol.ClaimView
}

func newRoomForum(t *testing.T, db *storage.DB) *roomForum {
	t.Helper()
	ctx := context.Background()
	if _, err := db.CreateAdmin(ctx, "root", "$argon2id$x"); err != nil {
		t.Fatal(err)
	}
	f := &roomForum{svc: newService(t, db), admin: human("root")}
	f.research = f.room(t, `{"name":"research","title":"Research"}`)
	f.inner = f.room(t, `{"name":"inner","title":"Inner","parent":"research"}`)
	f.ops = f.room(t, `{"name":"ops","title":"Ops","description":"the running forum"}`)
	asker := agent("asker", "read,write")
	f.inResearch = send(t, f.svc, asker, envelope("ask", "", "What does research find?", "room", "research"))
	f.inInner = send(t, f.svc, asker, envelope("ask", "", "What is inside?", "room", f.inner.ID))
	f.inOps = send(t, f.svc, asker, envelope("ask", "", "Is the ops queue long?", "room", strings.TrimPrefix(f.ops.ID, "rm_")))
	f.inGen = send(t, f.svc, asker, envelope("ask", "", "Anything in general?"))
	f.opsClaim = mustClaim(t, f.svc, asker, "assert", jsonOf(map[string]any{"thread": f.inOps.Thread.ID,
		"statement": "The ops queue is long.", "evidence": json.RawMessage(proof)}))
	mustClaim(t, f.svc, asker, "assert", jsonOf(map[string]any{"thread": f.inInner.Thread.ID,
		"statement": "Inside is quiet.", "evidence": json.RawMessage(proof)}))
	return f
}

func (f *roomForum) room(t *testing.T, input string) *protocol.RoomView {
	t.Helper()
	res, err := f.svc.CreateRoom(context.Background(), f.admin, []byte(input))
	if err != nil {
		t.Fatalf("create room %s: %v", input, err)
	}
	return res.Room
}

// scoped is an agent token scoped to rooms.
func scoped(handle, rights string, rooms ...int64) *protocol.Actor {
	a := agent(handle, rights)
	a.Rooms = rooms
	return a
}

func roomID(v *protocol.RoomView) int64 {
	id, _ := protocol.ParseIDString(v.ID, "rm_")
	return id
}

func TestRoomsGeneralHoldsEveryThread(t *testing.T) {
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		svc := newService(t, db)
		res := send(t, svc, agent("a", "read,write"), envelope("ask", "", "Where am I?"))
		if res.Thread.Room != "rm_1" {
			t.Errorf("a thread opened without a room is in %s, want rm_1", res.Thread.Room)
		}
		rooms, err := svc.ListRooms(context.Background(), reader, []byte(`{}`))
		if err != nil {
			t.Fatal(err)
		}
		if len(rooms.Rooms) != 1 || rooms.Rooms[0].ID != "rm_1" || rooms.Rooms[0].Name != "general" || rooms.Rooms[0].Threads != 1 || rooms.Rooms[0].LastActivity == nil {
			t.Errorf("rooms %s, want general with one thread", jsonOf(rooms))
		}
	})
}

// TestRoomScopeLeaksNothing: for every operation on a thread of another room, a scoped
// token gets exactly the answer for a thread that does not exist.
func TestRoomScopeLeaksNothing(t *testing.T) {
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		f := newRoomForum(t, db)
		ctx := context.Background()
		me := scoped("me", "read,write,lock,verify", roomID(f.research))
		other, missing := f.inOps.Thread.ID, "th_999999"
		otherMsg, missingMsg := f.inOps.Message.ID, "msg_999999"
		otherClaim, missingClaim := f.opsClaim.ID, "cl_999999"
		ops := []struct {
			name string
			call func(id, msg, claim string) error
		}{
			{"read_thread", func(id, _, _ string) error {
				_, err := f.svc.ReadThread(ctx, me, []byte(jsonOf(map[string]any{"thread": id})))
				return err
			}},
			{"read_events", func(id, _, _ string) error {
				_, err := f.svc.ReadEvents(ctx, me, []byte(jsonOf(map[string]any{"thread": id})))
				return err
			}},
			{"answer", func(id, _, _ string) error {
				_, err := f.svc.Send(ctx, me, []byte(envelope("answer", id, "Yes.")))
				return err
			}},
			{"reply to a message", func(_, msg, _ string) error {
				_, err := f.svc.Send(ctx, me, []byte(envelope("note", "", "Noted.", "parent", msg)))
				return err
			}},
			{"reply to a message in my thread", func(_, msg, _ string) error {
				_, err := f.svc.Send(ctx, me, []byte(envelope("note", f.inResearch.Thread.ID, "Noted.", "parent", msg)))
				return err
			}},
			{"close", func(id, _, _ string) error {
				_, err := f.svc.Send(ctx, me, []byte(envelope("close", id, "Done.")))
				return err
			}},
			{"confirm", func(id, _, _ string) error {
				_, err := f.svc.Confirm(ctx, me, []byte(jsonOf(map[string]any{"thread": id})))
				return err
			}},
			{"claim_assert", func(id, _, _ string) error {
				_, err := claimOp(f.svc, me, "assert", jsonOf(map[string]any{"thread": id, "statement": "S.", "evidence": json.RawMessage(proof)}))
				return err
			}},
			{"claim_read", func(_, _, c string) error {
				_, err := claimOp(f.svc, me, "read", jsonOf(map[string]any{"claim": c}))
				return err
			}},
			{"claim_attest", func(_, _, c string) error {
				_, err := claimOp(f.svc, me, "attest", jsonOf(map[string]any{"claim": c, "evidence": json.RawMessage(proof)}))
				return err
			}},
			{"claim_refute", func(_, _, c string) error {
				_, err := claimOp(f.svc, me, "refute", jsonOf(map[string]any{"claim": c, "body": "No.", "evidence": json.RawMessage(proof)}))
				return err
			}},
			{"claim_verify", func(_, _, c string) error {
				_, err := claimOp(f.svc, me, "verify", jsonOf(map[string]any{"claim": c, "evidence": json.RawMessage(proof)}))
				return err
			}},
			{"claim_graph", func(id, _, _ string) error {
				_, err := f.svc.Graph(ctx, me, []byte(jsonOf(map[string]any{"thread": id})))
				return err
			}},
			{"feed", func(id, _, _ string) error {
				feed, err := f.svc.OpenFeed(ctx, me, []byte(jsonOf(map[string]any{"thread": id})))
				if err == nil {
					feed.Close()
				}
				return err
			}},
		}
		for _, op := range ops {
			t.Run(op.name, func(t *testing.T) {
				got := refusal(t, op.call(other, otherMsg, otherClaim))
				want := refusal(t, op.call(missing, missingMsg, missingClaim))
				if got.Reason != protocol.ReasonNotFound {
					t.Errorf("refused with %s (%s), want not_found", got.Reason, got.Message)
				}
				for _, pair := range [][2]string{{other, missing}, {otherMsg, missingMsg}, {otherClaim, missingClaim}} {
					got.Message = strings.ReplaceAll(got.Message, pair[0], pair[1])
				}
				if jsonOf(got) != jsonOf(want) {
					t.Errorf("another room answers %s, a missing thread %s", jsonOf(got), jsonOf(want))
				}
			})
		}
		// Nothing was written by any of them.
		if n := len(readThread(t, f.svc, other).Messages); n != 1 {
			t.Errorf("the thread of another room has %d message trees", n)
		}
	})
}

// TestRoomScopeInEveryList: lists, the inbox, search, the feed and the graph hold only the
// threads a scoped token reaches, and full pages of them.
func TestRoomScopeInEveryList(t *testing.T) {
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		f := newRoomForum(t, db)
		ctx := context.Background()
		me := scoped("me", "read,write", roomID(f.research))
		want := []string{f.inInner.Thread.ID, f.inResearch.Thread.ID}

		list, err := f.svc.ListThreads(ctx, me, []byte(`{"limit":1}`))
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for {
			for _, th := range list.Threads {
				got = append(got, th.ID)
			}
			if !list.More {
				break
			}
			if list, err = f.svc.ListThreads(ctx, me, []byte(jsonOf(map[string]any{"limit": 1, "cursor": *list.Cursor}))); err != nil {
				t.Fatal(err)
			}
		}
		if !slices.Equal(got, want) {
			t.Errorf("list_threads of a scoped token: %v, want %v (pages of one, none empty)", got, want)
		}

		ids, _ := inboxIDs(t, f.svc, me, map[string]any{})
		slices.Sort(ids)
		wantSorted := slices.Clone(want)
		slices.Sort(wantSorted)
		if !slices.Equal(ids, wantSorted) {
			t.Errorf("inbox of a scoped token: %v, want %v", ids, wantSorted)
		}

		for _, word := range []string{"ops", "general"} {
			hits, err := f.svc.Search(ctx, me, []byte(jsonOf(map[string]any{"q": word})))
			if err != nil {
				t.Fatal(err)
			}
			if len(hits.Results) != 0 {
				t.Errorf("search %q found %d messages of other rooms", word, len(hits.Results))
			}
		}
		hits, err := f.svc.Search(ctx, me, []byte(`{"q":"inside"}`))
		if err != nil || len(hits.Results) != 1 {
			t.Errorf("search inside: %v %v", hits, err)
		}

		g, err := f.svc.Graph(ctx, me, []byte(`{}`))
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range g.Graph.Nodes {
			if n.Thread != f.inResearch.Thread.ID && n.Thread != f.inInner.Thread.ID {
				t.Errorf("the graph of a scoped token shows %s of %s", n.ID, n.Thread)
			}
		}
		if claims := countClaims(g); claims != 1 {
			t.Errorf("the graph of a scoped token has %d claims, want 1 (inner's)", claims)
		}

		since, err := f.svc.FeedCursor(ctx, me, []byte(`{}`))
		if err != nil {
			t.Fatal(err)
		}
		for _, th := range []string{f.inOps.Thread.ID, f.inResearch.Thread.ID, f.inGen.Thread.ID, f.inInner.Thread.ID} {
			send(t, f.svc, agent("writer", "read,write"), envelope("answer", th, "An answer."))
		}
		feed, err := f.svc.OpenFeed(ctx, me, []byte(`{"since":"`+since+`"}`))
		if err != nil {
			t.Fatal(err)
		}
		defer feed.Close()
		evs, err := feed.Next(ctx, 100, 0)
		if err != nil {
			t.Fatal(err)
		}
		if len(evs) != 4 {
			t.Errorf("the feed of a scoped token tells %d events, want the 2 answers in its rooms and their state events", len(evs))
		}
		for _, ev := range evs {
			th := ""
			switch d := ev.Data.(type) {
			case *protocol.MessageView:
				th = d.Thread
			case *protocol.EventView:
				th = d.Thread
			}
			if th != f.inResearch.Thread.ID && th != f.inInner.Thread.ID {
				t.Errorf("the feed of a scoped token tells of %s", th)
			}
		}

		rooms, err := f.svc.ListRooms(ctx, me, []byte(`{}`))
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, r := range rooms.Rooms {
			names = append(names, r.Name)
		}
		if !slices.Equal(names, []string{"research", "inner"}) {
			t.Errorf("a token scoped to research lists rooms %v, want research and inner", names)
		}
	})
}

func countClaims(g *protocol.GraphResult) int {
	n := 0
	for _, node := range g.Graph.Nodes {
		if strings.HasPrefix(node.ID, "cl_") {
			n++
		}
	}
	return n
}

// TestRoomFilter: the room filter holds a room and its inner rooms; a room the caller does
// not reach is not found, as one that does not exist.
func TestRoomFilter(t *testing.T) {
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		f := newRoomForum(t, db)
		ctx := context.Background()
		listed := func(a *protocol.Actor, room string) ([]string, error) {
			res, err := f.svc.ListThreads(ctx, a, []byte(jsonOf(map[string]any{"room": room})))
			if err != nil {
				return nil, err
			}
			var ids []string
			for _, th := range res.Threads {
				ids = append(ids, th.ID)
			}
			return ids, nil
		}
		for _, c := range []struct {
			room string
			want []string
		}{
			{"research", []string{f.inInner.Thread.ID, f.inResearch.Thread.ID}},
			{f.inner.ID, []string{f.inInner.Thread.ID}},
			{"rm_1", []string{f.inGen.Thread.ID}},
			{"general", []string{f.inGen.Thread.ID}},
		} {
			got, err := listed(reader, c.room)
			if err != nil || !slices.Equal(got, c.want) {
				t.Errorf("room %s lists %v (%v), want %v", c.room, got, err, c.want)
			}
		}
		me := scoped("me", "read", roomID(f.research))
		_, errOther := listed(me, "ops")
		_, errMissing := listed(me, "nowhere")
		a, b := wantRefused(t, errOther, protocol.ReasonNotFound), wantRefused(t, errMissing, protocol.ReasonNotFound)
		if strings.ReplaceAll(a.Message, "ops", "nowhere") != b.Message {
			t.Errorf("a room out of reach answers %q, a missing one %q", a.Message, b.Message)
		}
		if ids, _ := inboxIDs(t, f.svc, reader, map[string]any{"room": "inner"}); !slices.Equal(ids, []string{f.inInner.Thread.ID}) {
			t.Errorf("inbox in inner: %v", ids)
		}
		g, err := f.svc.Graph(ctx, reader, []byte(`{"room":"ops"}`))
		if err != nil || countClaims(g) != 1 {
			t.Errorf("the graph of ops: %v claims, %v", countClaims(g), err)
		}
		hits, err := f.svc.Search(ctx, reader, []byte(`{"q":"queue","room":"research"}`))
		if err != nil || len(hits.Results) != 0 {
			t.Errorf("search in research finds ops' message: %v %v", hits, err)
		}
		refuseInput := func(input string) {
			_, err := f.svc.ListThreads(ctx, reader, []byte(input))
			wantRefused(t, err, protocol.ReasonInvalidBody)
		}
		refuseInput(`{"room":"rm_0"}`)
		refuseInput(`{"room":"Not A Name"}`)
		refuseInput(`{"room":true}`)
		refuseInput(`{"room":-3}`)
	})
}

func TestArchivedRoomTakesNoThread(t *testing.T) {
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		f := newRoomForum(t, db)
		ctx := context.Background()
		if _, err := f.svc.UpdateRoom(ctx, f.admin, []byte(`{"room":"research","archived":true,"title":"Research (old)"}`)); err != nil {
			t.Fatal(err)
		}
		asker := agent("asker2", "read,write")
		refuse(t, f.svc, asker, envelope("ask", "", "New?", "room", "research"), protocol.ReasonInvalidTransition)
		refuse(t, f.svc, asker, envelope("ask", "", "Inside?", "room", "inner"), protocol.ReasonInvalidTransition)
		// Its threads stay readable and take replies.
		send(t, f.svc, asker, envelope("answer", f.inResearch.Thread.ID, "Still here."))
		_, err := f.svc.MoveThread(ctx, f.admin, []byte(jsonOf(map[string]any{"thread": f.inGen.Thread.ID, "room": "research"})))
		wantRefused(t, err, protocol.ReasonInvalidTransition)
		if _, err := f.svc.UpdateRoom(ctx, f.admin, []byte(`{"room":"research","archived":false}`)); err != nil {
			t.Fatal(err)
		}
		send(t, f.svc, asker, envelope("ask", "", "New again?", "room", "research"))
	})
}

func TestMoveThread(t *testing.T) {
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		f := newRoomForum(t, db)
		ctx := context.Background()
		me := scoped("me", "read,write", roomID(f.research))
		th := f.inOps.Thread.ID
		_, err := f.svc.MoveThread(ctx, agent("lock", "read,write,lock"), []byte(jsonOf(map[string]any{"thread": th, "room": "research"})))
		wantRefused(t, err, protocol.ReasonTokenRightMissing)
		res, err := f.svc.MoveThread(ctx, f.admin, []byte(jsonOf(map[string]any{"thread": th, "room": "inner"})))
		if err != nil {
			t.Fatal(err)
		}
		if res.Thread.Room != f.inner.ID || res.Event == nil || res.Event.Act != "move" || res.Event.Room == nil || *res.Event.Room != f.inner.ID {
			t.Errorf("move: %s", jsonOf(res))
		}
		// Now the scoped token reaches it, and finds it in its inbox again.
		if _, err := f.svc.ReadThread(ctx, me, []byte(jsonOf(map[string]any{"thread": th}))); err != nil {
			t.Errorf("a thread moved into reach: %v", err)
		}
		if ids, _ := inboxIDs(t, f.svc, me, map[string]any{}); !slices.Contains(ids, th) {
			t.Errorf("the moved thread is not in the inbox: %v", ids)
		}
		evs := events(t, f.svc, th)
		if last := evs[len(evs)-1]; last.Act != "move" {
			t.Errorf("the last event is %s, want move", last.Act)
		}
		// Moving into the room it is in writes nothing.
		res, err = f.svc.MoveThread(ctx, f.admin, []byte(jsonOf(map[string]any{"thread": th, "room": f.inner.ID})))
		if err != nil || res.Event != nil {
			t.Errorf("a move into the same room: %v %v", res, err)
		}
		_, err = f.svc.MoveThread(ctx, f.admin, []byte(jsonOf(map[string]any{"thread": th, "room": "nowhere"})))
		wantRefused(t, err, protocol.ReasonNotFound)
	})
}

// TestScopedLockCarriesDown: a lock scoped to research moderates research and the rooms
// inside it, and nothing else.
func TestScopedLockCarriesDown(t *testing.T) {
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		f := newRoomForum(t, db)
		ctx := context.Background()
		mod := scoped("mod", "read,write,lock", roomID(f.research))
		res := send(t, f.svc, mod, envelope("decide", f.inInner.Thread.ID, "Decided by the room's moderator."))
		if res.Thread.State != protocol.StateDecided || res.Thread.StateConfirmedAt == nil {
			t.Errorf("a scoped lock in an inner room: %s", jsonOf(res.Thread))
		}
		refuse(t, f.svc, mod, envelope("decide", f.inOps.Thread.ID, "Not mine."), protocol.ReasonNotFound)
		refuse(t, f.svc, mod, envelope("decide", f.inGen.Thread.ID, "Not mine."), protocol.ReasonNotFound)
		// An unscoped lock still reaches everything.
		send(t, f.svc, agent("global", "read,write,lock"), envelope("decide", f.inOps.Thread.ID, "Decided."))
		_ = ctx
	})
}

func TestRoomWrites(t *testing.T) {
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		f := newRoomForum(t, db)
		ctx := context.Background()
		if _, err := db.CreateUser(ctx, "plain", "$argon2id$x"); err != nil {
			t.Fatal(err)
		}
		for _, c := range []struct {
			name   string
			actor  *protocol.Actor
			input  string
			reason protocol.Reason
		}{
			{"an agent", agent("a", "read,write,lock"), `{"name":"x","title":"X"}`, protocol.ReasonTokenRightMissing},
			{"a human who is no administrator", human("plain"), `{"name":"x","title":"X"}`, protocol.ReasonTokenRightMissing},
			{"a room inside an inner room", f.admin, `{"name":"deeper","title":"D","parent":"inner"}`, protocol.ReasonInvalidBody},
			{"a taken name", f.admin, `{"name":"ops","title":"Again"}`, protocol.ReasonInvalidBody},
			{"a name that is a number", f.admin, `{"name":"42","title":"N"}`, protocol.ReasonInvalidBody},
			{"a bad name", f.admin, `{"name":"Big Room","title":"B"}`, protocol.ReasonInvalidBody},
			{"no title", f.admin, `{"name":"untitled"}`, protocol.ReasonInvalidBody},
			{"an empty title", f.admin, `{"name":"untitled","title":"  "}`, protocol.ReasonInvalidBody},
			{"an unknown parent", f.admin, `{"name":"orphan","title":"O","parent":"rm_99"}`, protocol.ReasonNotFound},
			{"an unknown field", f.admin, `{"name":"y","title":"Y","colour":"red"}`, protocol.ReasonInvalidBody},
		} {
			t.Run(c.name, func(t *testing.T) {
				_, err := f.svc.CreateRoom(ctx, c.actor, []byte(c.input))
				wantRefused(t, err, c.reason)
			})
		}
		_, err := f.svc.UpdateRoom(ctx, agent("a", "read,write,lock"), []byte(`{"room":"ops","archived":true}`))
		wantRefused(t, err, protocol.ReasonTokenRightMissing)
		_, err = f.svc.UpdateRoom(ctx, f.admin, []byte(`{"room":"ops","archived":"yes"}`))
		wantRefused(t, err, protocol.ReasonInvalidBody)
		res, err := f.svc.UpdateRoom(ctx, f.admin, []byte(`{"room":"ops","title":"Operations","description":""}`))
		if err != nil || res.Room.Title != "Operations" || res.Room.Description != "" || res.Room.Name != "ops" {
			t.Errorf("update: %v %v", res, err)
		}
		rooms, _ := f.svc.ListRooms(ctx, reader, []byte(`{}`))
		var names []string
		for _, r := range rooms.Rooms {
			names = append(names, r.Name)
		}
		if !slices.Equal(names, []string{"general", "ops", "research", "inner"}) {
			t.Errorf("rooms in order %v", names)
		}
		// room belongs to an opening ask alone.
		refuse(t, f.svc, agent("a", "read,write"), envelope("answer", f.inGen.Thread.ID, "x", "room", "ops"), protocol.ReasonInvalidBody)
		refuse(t, f.svc, agent("a", "read,write"), envelope("ask", "", "x", "room", "nowhere"), protocol.ReasonNotFound)
		me := scoped("me", "read,write", roomID(f.research))
		refuse(t, f.svc, me, envelope("ask", "", "x", "room", "ops"), protocol.ReasonNotFound)
	})
}

func TestManifestNamesRooms(t *testing.T) {
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		f := newRoomForum(t, db)
		m := f.svc.Manifest(nil)
		found := false
		for _, p := range m.Profiles {
			found = found || p.Name == "rooms"
		}
		if !found {
			t.Error("the manifest names no profile rooms")
		}
		// A scoped token authenticated from storage names the rooms it reaches.
		ctx := context.Background()
		secret, _ := protocol.NewTokenSecret()
		rooms, err := f.svc.ResolveTokenRooms(ctx, []string{"research"})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := db.CreateToken(ctx, storage.NewToken{Identity: "ainotes:sc", SecretHash: protocol.HashTokenSecret(secret), Rights: "read", Rooms: rooms}); err != nil {
			t.Fatal(err)
		}
		a, err := f.svc.Authenticate(ctx, secret)
		if err != nil {
			t.Fatal(err)
		}
		m, err2 := f.svc.GetManifest(ctx, a, []byte(`{}`))
		if err2 != nil {
			t.Fatal(err2)
		}
		if you := m.You; !slices.Equal(you.Rooms, []string{f.research.ID, f.inner.ID}) {
			t.Errorf("you.rooms %v, want research and inner", you.Rooms)
		}
		if f.svc.Manifest(reader).You.Rooms != nil {
			t.Error("an unscoped token names rooms")
		}
		if _, err := f.svc.ResolveTokenRooms(ctx, []string{"nowhere"}); err == nil {
			t.Error("a token scoped to a room that does not exist")
		}
	})
}
