package protocol_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/parleyforum/parley/protocol"
	"github.com/parleyforum/parley/storage"
	"github.com/parleyforum/parley/storage/storagetest"
)

// § 7: the inbox.

// Whose turn it is, per line and per extension; confirmed closed and side states are never
// listed.
func TestInboxWhoseTurn(t *testing.T) {
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		ctx := context.Background()
		svc := newService(t, db)
		alice := agent("alice", "read,write")
		bob := agent("bob", "read,write")
		carol := agent("carol", "read,write")
		mod := agent("mod", "read,write,lock")
		ada := human("ada")
		ext := func(e string) map[string]string { return map[string]string{"extension": e} }
		open := func(a *protocol.Actor, e, body string) *protocol.SendResult {
			return send(t, svc, a, envelope("ask", "", body, "from", ext(e)))
		}

		t1 := open(alice, "w1", "t1: directed to alice/w1").Thread.ID
		answer1 := send(t, svc, bob, envelope("answer", t1, "bob answers alice/w1"))
		t2 := open(alice, "w2", "t2: anyone but alice/w2").Thread.ID
		t3 := open(carol, "", "t3: anyone but carol").Thread.ID
		t4 := open(alice, "", "t4: directed to alice/default").Thread.ID
		send(t, svc, bob, envelope("answer", t4, "bob answers alice"))
		t5 := open(alice, "w1", "t5: anyone but alice/w1").Thread.ID
		t6 := open(bob, "", "t6: anyone but bob").Thread.ID

		t7 := open(carol, "", "t7: deferred, then asked again").Thread.ID
		send(t, svc, mod, envelope("defer", t7, "parked"))
		if res := send(t, svc, bob, envelope("ask", t7, "still asking")); res.Thread.Awaiting == nil || res.Thread.State != protocol.StateDeferred {
			t.Fatalf("t7: %s", jsonOf(res.Thread))
		}
		t8 := open(carol, "", "t8: marked closed while awaiting anyone").Thread.ID
		mustModerate(t)(mark(svc, ada, t8, protocol.StateClosed))
		t9 := open(carol, "", "t9: proposed closed, answered, then confirmed").Thread.ID
		send(t, svc, bob, envelope("answer", t9, "answer"))
		send(t, svc, carol, envelope("close", t9, "closed, proposed"))
		send(t, svc, bob, envelope("answer", t9, "an answer after the proposed close"))
		inboxWant(t, svc, carol, nil, t2, t3, t5, t6, t9) // a proposed closed is still listed
		mustModerate(t)(confirm(svc, mod, t9))
		t10 := open(carol, "", "t10: decided at once, nobody awaited").Thread.ID
		send(t, svc, carol, envelope("decide", t10, "decided"))
		for _, th := range []string{t7, t8, t9} {
			if aw := thread(t, svc, th).Awaiting; aw == nil {
				t.Fatalf("%s awaits nobody; the test wants a turn that the inbox must hide", th)
			}
		}

		views := []struct {
			who  *protocol.Actor
			req  map[string]any
			want []string
		}{
			{alice, nil, []string{t1, t2, t3, t4, t5, t6}},
			{alice, map[string]any{"extension": "w1"}, []string{t1, t2, t3, t6}},
			{alice, map[string]any{"extension": "w2"}, []string{t3, t5, t6}},
			{alice, map[string]any{"extension": ""}, []string{t2, t3, t4, t5, t6}},
			{alice, map[string]any{"extension": "w3"}, []string{t2, t3, t5, t6}},
			{alice, map[string]any{"extension": nil}, []string{t1, t2, t3, t4, t5, t6}},
			{bob, nil, []string{t2, t3, t5, t6}},
			{bob, map[string]any{"extension": ""}, []string{t2, t3, t5}},
			{carol, nil, []string{t2, t3, t5, t6}},
			{carol, map[string]any{"extension": ""}, []string{t2, t5, t6}},
			{mod, nil, []string{t2, t3, t5, t6}},
			{ada, nil, []string{t2, t3, t5, t6}},
		}
		for _, v := range views {
			req := v.req
			if req == nil {
				req = map[string]any{}
			}
			inboxWant(t, svc, v.who, req, v.want...)
		}

		// An item carries the thread, its awaiting and the message that set it.
		res := inboxWant(t, svc, alice, map[string]any{"extension": "w1"}, t1, t2, t3, t6)
		it := res.Items[0]
		if it.Thread.ID != t1 || !sameAwaiting(it.Awaiting, it.Thread.Awaiting) || it.Message == nil ||
			it.Message.ID != answer1.Message.ID || it.Awaiting.To == nil || it.Awaiting.To.Extension != "w1" {
			t.Fatalf("item: %s", jsonOf(it))
		}
		if res.More {
			t.Fatalf("more without more")
		}

		_, err := svc.Inbox(ctx, nil, []byte(`{}`))
		wantRefused(t, err, protocol.ReasonUnauthenticated)
		_, err = svc.Inbox(ctx, agent("writer", "write"), []byte(`{}`))
		wantRefused(t, err, protocol.ReasonTokenRightMissing)
	})
}

// Oldest change first, since, and the cursor of an empty read.
func TestInboxSince(t *testing.T) {
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		svc := newService(t, db)
		alice := agent("alice", "read,write")
		bob := agent("bob", "read,write")
		carol := agent("carol", "read,write")

		t1 := send(t, svc, alice, envelope("ask", "", "first")).Thread.ID
		t2 := send(t, svc, alice, envelope("ask", "", "second")).Thread.ID
		t3 := send(t, svc, alice, envelope("ask", "", "third")).Thread.ID
		inboxWant(t, svc, bob, map[string]any{}, t1, t2, t3)
		// carol's ask in t1 changes its awaiting: t1 is now the newest change.
		send(t, svc, carol, envelope("ask", t1, "a new question in the first"))
		first := inboxWant(t, svc, bob, map[string]any{}, t2, t3, t1)

		// Nothing new: no items, and the cursor is the current position.
		empty := inboxWant(t, svc, bob, map[string]any{"since": first.Cursor})
		if empty.More || empty.Cursor == "" {
			t.Fatalf("empty read: %s", jsonOf(empty))
		}
		c := empty.Cursor
		aliceAtC := caughtUp(t, svc, alice, map[string]any{}) // a cursor belongs to its reader's inbox
		// A note leaves the awaiting as it is: nothing new.
		send(t, svc, carol, envelope("note", t2, "a note"))
		inboxWant(t, svc, bob, map[string]any{"since": c})
		// A change of the awaiting is new.
		send(t, svc, carol, envelope("ask", t3, "another question"))
		next := inboxWant(t, svc, bob, map[string]any{"since": c}, t3)
		// A change that makes the turn someone else's is not bob's.
		send(t, svc, bob, envelope("answer", t2, "bob answers the second"))
		inboxWant(t, svc, bob, map[string]any{"since": next.Cursor})
		inboxWant(t, svc, alice, map[string]any{"since": aliceAtC}, t3, t2)
		inboxWant(t, svc, bob, map[string]any{}, t1, t3)
		// The cursor of an empty read keeps its place: a later change shows up after it.
		last := inboxWant(t, svc, bob, map[string]any{"since": next.Cursor})
		t4 := send(t, svc, alice, envelope("ask", "", "fourth")).Thread.ID
		inboxWant(t, svc, bob, map[string]any{"since": last.Cursor}, t4)
	})
}

// limit and more, clamped at inbox_max_items; the default page is inbox_default_items.
func TestInboxPaging(t *testing.T) {
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		limits := generous()
		limits.InboxMaxItems = 3
		limits.InboxDefaultItems = 2
		svc := newService(t, db, limits)
		alice := agent("alice", "read,write")
		bob := agent("bob", "read,write")
		var all []string
		for i := range 7 {
			all = append(all, send(t, svc, alice, envelope("ask", "", "question "+itoa(i))).Thread.ID)
		}
		if res := inboxWant(t, svc, bob, map[string]any{}, all[:2]...); !res.More {
			t.Fatalf("the default page of 2 of 7: more is false")
		}
		for _, limit := range []any{50, "50", 3, json.Number("100000000000000000000"), "100000000000000000000"} {
			if res := inboxWant(t, svc, bob, map[string]any{"limit": limit}, all[:3]...); !res.More {
				t.Fatalf("limit %v: more is false", limit)
			}
		}
		if res := inboxWant(t, svc, bob, map[string]any{"limit": 1}, all[0]); !res.More {
			t.Fatalf("limit 1: more is false")
		}
		var seen []string
		req := map[string]any{"limit": 3}
		for page := 0; ; page++ {
			want := all[len(seen):min(len(seen)+3, len(all))]
			res := inboxWant(t, svc, bob, req, want...)
			seen = append(seen, want...)
			if res.More != (len(seen) < len(all)) {
				t.Fatalf("page %d: more %v after %d of %d", page, res.More, len(seen), len(all))
			}
			req["since"] = res.Cursor
			if !res.More {
				break
			}
		}
		inboxWant(t, svc, bob, req)
	})
}

func TestInboxRefusesBadInput(t *testing.T) {
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		ctx := context.Background()
		svc := newService(t, db)
		alice := agent("alice", "read,write")
		send(t, svc, alice, envelope("ask", "", "q"))
		list, err := svc.ListThreads(ctx, reader, []byte(`{"limit":0}`))
		if err == nil {
			t.Fatalf("list_threads limit 0: %v", list)
		}
		threadsCursor := ""
		send(t, svc, alice, envelope("ask", "", "q2"))
		if page, err := svc.ListThreads(ctx, reader, []byte(`{"limit":1}`)); err != nil || page.Cursor == nil {
			t.Fatalf("list_threads: %v %v", page, err)
		} else {
			threadsCursor = *page.Cursor
		}
		evs, err := svc.ReadEvents(ctx, reader, []byte(`{"thread":"th_1"}`))
		if err != nil {
			t.Fatal(err)
		}
		for _, body := range []string{
			`{"since":"x"}`, `{"since":""}`, `{"since":"aTEuMQ"}`, `{"since":"aTEuMS4yLjM"}`, `{"since":"aTEuLTEuMg"}`,
			`{"since":` + jsonOf(threadsCursor) + `}`, `{"since":` + jsonOf(evs.Cursor) + `}`, `{"since":5}`,
			`{"extension":".w"}`, `{"extension":"a b"}`, `{"extension":5}`,
			`{"limit":0}`, `{"limit":-1}`, `{"limit":1.5}`, `{"limit":"x"}`,
			`{"wait_seconds":-1}`, `{"wait_seconds":"soon"}`,
			`{"unknown":1}`, `[]`, `x`,
		} {
			_, err := svc.Inbox(ctx, alice, []byte(body))
			if e := refusal(t, err); e.Reason != protocol.ReasonInvalidBody {
				t.Errorf("inbox %s: %s, want invalid_body", body, e.Reason)
			}
		}
	})
}

// wait_seconds: a long poll returns as soon as something is the caller's.
func TestInboxWaitReturnsWhenSomethingArrives(t *testing.T) {
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		svc := newService(t, db)
		alice := agent("alice", "read,write")
		bob := agent("bob", "read,write")
		start := inboxWant(t, svc, bob, map[string]any{"extension": ""})

		sent := make(chan string, 1)
		go func() {
			time.Sleep(200 * time.Millisecond)
			// Someone else's turn first, then bob's.
			if _, err := svc.Send(context.Background(), bob, []byte(envelope("ask", "", "bob asks, not his own turn"))); err != nil {
				sent <- "error: " + err.Error()
				return
			}
			time.Sleep(100 * time.Millisecond)
			res, err := svc.Send(context.Background(), alice, []byte(envelope("ask", "", "for bob")))
			if err != nil {
				sent <- "error: " + err.Error()
				return
			}
			sent <- res.Thread.ID
		}()
		req := map[string]any{"since": start.Cursor, "wait_seconds": 25, "extension": ""}
		var ids []string
		for try := 0; len(ids) == 0 && try < 3; try++ {
			ids, _ = inboxIDs(t, svc, bob, req)
		}
		th := <-sent
		if len(ids) != 1 || ids[0] != th {
			t.Fatalf("the long poll returned %v, want [%s]", ids, th)
		}
	})
}
