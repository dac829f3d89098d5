package web_test

import (
	"net/http"
	"sort"
	"strings"
	"testing"

	"github.com/parleyforum/parley/storage"
	"github.com/parleyforum/parley/storage/storagetest"
	"github.com/parleyforum/parley/web"
)

// The live pages: the thread page and the queue name their streams and the parts they
// refresh; a stream read with the human's session tells the parts by name, only of its
// thread, carries no content, and resumes from Last-Event-ID with what was missed; a reader
// who may not read gets no stream.
func TestLivePages(t *testing.T) {
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		f := newSite(t, db, web.Options{})
		f.account("ada", false)
		thread, _ := f.ask(f.alice, "Does the page follow live?")
		elsewhere, _ := f.ask(f.alice, "Another thread")
		b := f.signedIn(t, "ada")

		page := b.get("/threads/"+thread).must(t, http.StatusOK)
		connect := page.find(`[hx-ext="sse"][sse-connect^="/threads/`+thread+`/live?since="]`).AttrOr("sse-connect", "")
		if connect == "" {
			t.Fatalf("the thread page opens no stream to its live route from its own place")
		}
		for _, part := range []string{"message-tree", "thread-state", "timeline"} {
			if page.find("#"+part).Length() != 1 || page.find(`[data-live="`+part+`"][hx-get="/threads/`+thread+`"]`).Length() != 1 {
				t.Errorf("the thread page does not refresh #%s live", part)
			}
		}
		queue := b.get("/moderation").must(t, http.StatusOK)
		if queue.find(`[sse-connect^="/moderation/live?since="]`).Length() != 1 || queue.find("#queue-live").Length() != 1 ||
			queue.find(`[data-live="queue-live"][hx-get="/moderation"]`).Length() != 1 {
			t.Errorf("the moderation queue does not refresh itself live")
		}

		// Written after the page was read and before its stream opened: the stream tells it.
		f.send(f.bob, `{"kind":"note","thread":"`+thread+`","body":"Sent while the page loads."}`)
		s := f.openFeed(connect, "", "", b.client).start()
		if got := s.nextN(2); got[0].event != "live" || got[0].id == "" || got[1].event != "messages" {
			t.Fatalf("the page's stream begins with %s (id %q), %s; want live with a cursor, then the message sent while it loaded",
				got[0].event, got[0].id, got[1].event)
		}
		f.send(f.bob, `{"kind":"note","thread":"`+elsewhere+`","body":"Not this thread."}`)
		f.send(f.bob, `{"kind":"answer","thread":"`+thread+`","body":"An answer <b>with markup</b>."}`)
		evs := s.nextN(2)
		names := []string{evs[0].event, evs[1].event}
		sort.Strings(names)
		if strings.Join(names, " ") != "messages state" {
			t.Errorf("an answer is told as %v, want messages and state", names)
		}
		for _, ev := range evs {
			if ev.data != "{}" || ev.id == "" {
				t.Errorf("event %s carries %q (id %q), want no content and a cursor", ev.event, ev.data, ev.id)
			}
		}
		last := evs[1].id
		s.close()

		f.send(f.bob, `{"kind":"note","thread":"`+thread+`","body":"Sent while the page was away."}`)
		resumed := f.openFeed("/threads/"+thread+"/live", "", last, b.client).start()
		if got := resumed.nextN(2); got[0].event != "live" || got[1].event != "messages" {
			t.Errorf("after Last-Event-ID the stream tells %s, %s; want live, then the missed messages", got[0].event, got[1].event)
		}
		resumed.close()

		q := f.openFeed("/moderation/live", "", "", b.client).start()
		if ev := q.next(); ev.event != "live" {
			t.Fatalf("the queue's stream begins with %q", ev.event)
		}
		f.send(f.bob, `{"kind":"answer","thread":"`+elsewhere+`","body":"A proposal for the queue."}`)
		if ev := q.next(); ev.event != "queue" {
			t.Errorf("the queue's stream tells %q of a proposal, want queue", ev.event)
		}

		f.browser(t).get("/threads/"+thread+"/live").redirectsTo(t, "/login?next=%2Fthreads%2F"+thread+"%2Flive")
	})
}
