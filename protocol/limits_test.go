package protocol_test

import (
	"context"
	"strings"
	"testing"

	"github.com/parleyforum/parley/protocol"
	"github.com/parleyforum/parley/storage"
	"github.com/parleyforum/parley/storage/storagetest"
)

// § 8: the limits in force are the limits enforced.

func TestThreadMaxMessages(t *testing.T) {
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		limits := generous()
		limits.ThreadMaxMessages = 3
		svc := newService(t, db, limits)
		alice := agent("alice", "read,write")
		bob := agent("bob", "read,write")
		mod := agent("mod", "read,write,lock")
		th := send(t, svc, alice, envelope("ask", "", "Three messages at most")).Thread.ID
		send(t, svc, bob, envelope("answer", th, "two"))
		send(t, svc, mod, envelope("note", th, "three"))
		before := census(t, svc)
		refuse(t, svc, alice, envelope("decide", th, "four"), protocol.ReasonLimitExceeded)
		for _, a := range []*protocol.Actor{agent("carol", "read,write"), mod, human("ada")} {
			for _, kind := range []string{"note", "answer", "ask", "decide"} {
				if kind == "decide" && !a.Moderator() {
					continue
				}
				e := refuse(t, svc, a, envelope(kind, th, "four"), protocol.ReasonLimitExceeded)
				if e.Status != 409 || !strings.Contains(e.Message, "thread_max_messages") {
					t.Fatalf("refusal: %+v", e)
				}
			}
		}
		if after := census(t, svc); after != before {
			t.Fatalf("refused writes wrote: %+v -> %+v", before, after)
		}
		// Other threads are not affected.
		other := send(t, svc, alice, envelope("ask", "", "another thread")).Thread.ID
		send(t, svc, bob, envelope("answer", other, "fine"))
	})
}

func TestThreadMaxDepth(t *testing.T) {
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		limits := generous()
		limits.ThreadMaxDepth = 2
		svc := newService(t, db, limits)
		alice := agent("alice", "read,write")
		bob := agent("bob", "read,write")
		root := send(t, svc, alice, envelope("ask", "", "Two levels deep at most"))
		d1 := send(t, svc, bob, envelope("answer", "", "depth 1", "parent", root.Message.ID))
		d2 := send(t, svc, alice, envelope("ask", "", "depth 2", "parent", d1.Message.ID))
		before := census(t, svc)
		for _, kind := range []string{"answer", "note", "ask"} {
			e := refuse(t, svc, bob, envelope(kind, "", "depth 3", "parent", d2.Message.ID), protocol.ReasonLimitExceeded)
			if !strings.Contains(e.Message, "thread_max_depth") {
				t.Fatalf("refusal: %+v", e)
			}
		}
		refuse(t, svc, human("ada"), envelope("note", "", "depth 3", "parent", d2.Message.ID), protocol.ReasonLimitExceeded)
		if after := census(t, svc); after != before {
			t.Fatalf("refused writes wrote: %+v -> %+v", before, after)
		}
		// Beside the deep branch there is room.
		send(t, svc, agent("carol", "read,write"), envelope("note", "", "depth 2, beside", "parent", d1.Message.ID))
		send(t, svc, alice, envelope("decide", root.Thread.ID, "state acts attach to the root"))
	})
}

func TestWritesPerMinute(t *testing.T) {
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		limits := generous()
		limits.WritesPerMinute = 3
		svc := newService(t, db, limits)
		alice := agent("alice", "read,write")
		bob := agent("bob", "read,write")
		ada := human("ada")

		// ada (not rate-limited) opens a thread for bob to talk in.
		th := send(t, svc, ada, envelope("ask", "", "Talk to me")).Thread.ID
		send(t, svc, bob, envelope("answer", th, "write 1"))
		// Refused writes do not count, whatever the reason.
		refuse(t, svc, bob, envelope("answer", th, "to myself"), protocol.ReasonSelfReply)
		refuse(t, svc, bob, envelope("decide", th, "not mine"), protocol.ReasonThreadAuthorityMissing)
		refuse(t, svc, bob, envelope("note", "th_999", "nowhere"), protocol.ReasonNotFound)
		refuse(t, svc, bob, `{"kind":"note","thread":"`+th+`"}`, protocol.ReasonInvalidBody)
		refuse(t, svc, bob, envelope("reopen", th, "not closed"), protocol.ReasonThreadAuthorityMissing)
		send(t, svc, bob, envelope("ask", "", "write 2"))
		// The line shares one budget, whatever the extension.
		send(t, svc, bob, envelope("ask", "", "write 3", "from", map[string]string{"extension": "w2"}))
		e := refuse(t, svc, bob, envelope("ask", "", "write 4", "from", map[string]string{"extension": "w3"}), protocol.ReasonRateLimited)
		if e.Status != 429 || e.RetryAfter < 1 || e.RetryAfter > 60 {
			t.Fatalf("rate refusal: %+v", e)
		}
		before := census(t, svc)
		refuse(t, svc, bob, envelope("note", th, "still limited"), protocol.ReasonRateLimited)
		if after := census(t, svc); after != before {
			t.Fatalf("a rate-limited write wrote: %+v -> %+v", before, after)
		}
		// Per identity: alice has her own budget; humans have none.
		for i := range 3 {
			send(t, svc, alice, envelope("ask", "", "alice "+itoa(i)))
		}
		refuse(t, svc, alice, envelope("ask", "", "alice 4"), protocol.ReasonRateLimited)
		for i := range 10 {
			send(t, svc, ada, envelope("note", th, "ada "+itoa(i)))
		}
		mustModerate(t)(mark(svc, ada, th, protocol.StateDecided))
	})
}

// Text limits: exactly at the limit is accepted, one over refused; counted in code points.
func TestTextLimits(t *testing.T) {
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		limits := generous()
		limits.BodyMaxChars = 10
		limits.ExtensionMaxChars = 5
		limits.ProvenanceFieldMaxChars = 4
		svc := newService(t, db, limits)
		alice := agent("alice", "read,write")
		cases := []struct {
			name   string
			env    string
			accept bool
			field  string
		}{
			{"body at the limit", envelope("ask", "", strings.Repeat("ß", 10)), true, ""},
			{"body of four-byte code points at the limit", envelope("ask", "", strings.Repeat("🦉", 10)), true, ""},
			{"body one over", envelope("ask", "", strings.Repeat("ß", 11)), false, "body"},
			{"extension at the limit", envelope("ask", "", "q", "from", map[string]string{"extension": "abcde"}), true, ""},
			{"extension one over", envelope("ask", "", "q", "from", map[string]string{"extension": "abcdef"}), false, "from.extension"},
			{"provenance at the limit", envelope("ask", "", "q", "provenance", map[string]string{"model": "éééé", "client": "€€€€"}), true, ""},
			{"provenance.model one over", envelope("ask", "", "q", "provenance", map[string]string{"model": "ééééé"}), false, "provenance.model"},
			{"provenance.client one over", envelope("ask", "", "q", "provenance", map[string]string{"client": "€€€€€"}), false, "provenance.client"},
		}
		for _, c := range cases {
			res, err := svc.Send(context.Background(), alice, []byte(c.env))
			if c.accept {
				if err != nil {
					t.Errorf("%s: %v", c.name, err)
				}
				continue
			}
			if err == nil {
				t.Errorf("%s: accepted as %s", c.name, res.Message.ID)
				continue
			}
			if e := refusal(t, err); e.Reason != protocol.ReasonInvalidBody || !strings.Contains(e.Message, c.field) {
				t.Errorf("%s: %v, want invalid_body naming %s", c.name, err, c.field)
			}
		}
		// The inbox takes extensions by the same limit.
		if _, err := svc.Inbox(context.Background(), alice, []byte(`{"extension":"abcdef"}`)); err == nil {
			t.Errorf("inbox extension one over the limit: accepted")
		}
	})
}

func TestListLimitClamped(t *testing.T) {
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		limits := generous()
		limits.ListMaxItems = 2
		svc := newService(t, db, limits)
		alice := agent("alice", "read,write")
		for i := range 5 {
			send(t, svc, alice, envelope("ask", "", "thread "+itoa(i)))
		}
		for _, limit := range []string{"3", `"3"`, "100000000000000000000", `"100000000000000000000"`} {
			page, err := svc.ListThreads(context.Background(), reader, []byte(`{"limit":`+limit+`}`))
			if err != nil || len(page.Threads) != 2 || !page.More {
				t.Fatalf("list_threads limit %s: %v %v", limit, page, err)
			}
		}
		for _, limit := range []string{"0", "-1", "1.5", `"x"`, "1e2", `""`} {
			if _, err := svc.ListThreads(context.Background(), reader, []byte(`{"limit":`+limit+`}`)); err == nil {
				t.Fatalf("list_threads limit %s: accepted", limit)
			}
		}
		seen := 0
		req := map[string]any{"limit": 50}
		for {
			page, err := svc.ListThreads(context.Background(), reader, []byte(jsonOf(req)))
			if err != nil {
				t.Fatal(err)
			}
			if len(page.Threads) > 2 {
				t.Fatalf("list_threads gave %d threads over list_max_items 2", len(page.Threads))
			}
			seen += len(page.Threads)
			if !page.More {
				break
			}
			req["cursor"] = *page.Cursor
		}
		if seen != 5 {
			t.Fatalf("paging saw %d threads, want 5", seen)
		}
	})
}
