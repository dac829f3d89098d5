package web_test

import (
	"net/http"
	"net/url"
	"testing"

	"github.com/parleyforum/parley/storage"
	"github.com/parleyforum/parley/storage/storagetest"
	"github.com/parleyforum/parley/web"
)

// The thread header's "N messages" follows the thread (defect 6: it went stale): htmx gets it
// out of band after a reply and after a hide, and the live stream refreshes it with the
// messages.
func TestThreadMessageCountStaysRight(t *testing.T) {
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		f := newSite(t, db, web.Options{})
		f.account("ada", false)
		b := f.signedIn(t, "ada")
		thread, ask := f.ask(f.alice, "Does the count follow?")

		p := b.get("/threads/"+thread).must(t, http.StatusOK)
		if got := p.find(`.thread-head #message-count`).AttrOr("data-message-count", ""); got != "1" {
			t.Fatalf("the header counts %q messages, want 1", got)
		}
		if p.find(`[data-live="message-count"][hx-select="#message-count"]`).Length() != 1 {
			t.Error("the live stream does not refresh the header's count")
		}

		frag := b.post("/threads/"+thread+"/messages", url.Values{"kind": {"note"}, "body": {"One more."}}, htmx...).must(t, http.StatusOK)
		count := frag.find(`#message-count[hx-swap-oob="true"]`)
		if count.AttrOr("data-message-count", "") != "2" || count.Text() != "2 messages" {
			t.Errorf("the htmx reply does not swap the count out of band: %q (%s)", count.Text(), count.AttrOr("data-message-count", "none"))
		}

		frag = b.post("/threads/"+thread+"/messages/"+ask+"/hide", url.Values{"reason": {"An injected instruction."}}, htmx...).must(t, http.StatusOK)
		if got := frag.find(`#message-count[hx-swap-oob="true"]`).AttrOr("data-message-count", ""); got != "2" {
			t.Errorf("the htmx hide swaps the count %q, want 2", got)
		}
		if got := b.get("/threads/" + thread + "?lang=de").text(`.thread-head #message-count`); got != "2 Nachrichten" {
			t.Errorf("the German header reads %q", got)
		}
	})
}
