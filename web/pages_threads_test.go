package web_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"github.com/parleyforum/parley/storage"
	"github.com/parleyforum/parley/storage/storagetest"
	"github.com/parleyforum/parley/web"
)

// The thread list: a row per thread with data-thread-id, the newest activity first, with
// its state badge and whether that is an unconfirmed proposal; filters by state and by
// "needs confirmation"; cursor paging; a bad filter is refused on the page.
func TestThreadList(t *testing.T) {
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		f := newSite(t, db, web.Options{})
		f.account("ada", false)
		first, _ := f.ask(f.alice, "First question")
		second, _ := f.ask(f.alice, "Second question")
		third, _ := f.ask(f.bob, "Third question")
		f.send(f.bob, `{"kind":"answer","thread":"`+first+`","body":"An answer moves the first thread up."}`)
		b := f.signedIn(t, "ada")

		list := b.get("/").must(t, http.StatusOK)
		var ids []string
		list.find("[data-thread-id]").Each(func(_ int, s *goquery.Selection) { ids = append(ids, s.AttrOr("data-thread-id", "")) })
		if strings.Join(ids, " ") != strings.Join([]string{first, third, second}, " ") {
			t.Fatalf("rows %v, want the newest activity first: %s %s %s", ids, first, third, second)
		}
		row := list.find(`[data-thread-id="` + first + `"]`)
		if row.Find(`[data-state="answered"][data-confirmed="false"]`).Length() != 1 ||
			!strings.Contains(row.Text(), "proposed, unconfirmed") || !strings.Contains(row.Text(), "ainotes:alice") {
			t.Errorf("the first thread's row does not show its unconfirmed answer: %q", row.Text())
		}
		if got := strings.Join(strings.Fields(row.Text()), " "); !strings.Contains(got, "Whose turn: ") ||
			!strings.Contains(got, "Opened by: ainotes:alice") || !strings.Contains(got, "2 messages") {
			t.Errorf("the row does not label whose turn it is, its creator and its messages for a phone: %q", got)
		}
		if row.Find(".wide-only").Text() != "2" {
			t.Errorf("the wide row's message count reads %q, want 2", row.Find(".wide-only").Text())
		}
		if row.Find(`a[href="/threads/`+first+`"]`).Text() != "First question" {
			t.Errorf("the row does not link its thread by title: %q", row.Text())
		}

		only := func(target string, want ...string) {
			t.Helper()
			var got []string
			b.get(target).must(t, http.StatusOK).find("[data-thread-id]").Each(func(_ int, s *goquery.Selection) {
				got = append(got, s.AttrOr("data-thread-id", ""))
			})
			if strings.Join(got, " ") != strings.Join(want, " ") {
				t.Errorf("GET %s lists %v, want %v", target, got, want)
			}
		}
		only("/?state=answered", first)
		only("/?state=open", third, second)
		only("/?unconfirmed=1", first)
		only("/?state=closed")

		page := b.get("/?"+url.Values{"state": {"nonsense"}}.Encode()).must(t, http.StatusBadRequest)
		if page.find(`[data-reason="invalid_body"]`).Length() != 1 {
			t.Errorf("a bad state filter is not refused on the page:\n%s", page.body)
		}
		b.get("/?cursor=forged").must(t, http.StatusBadRequest)
	})
}

func TestThreadListPages(t *testing.T) {
	db := storagetest.Open(t, storage.SQLite)
	f := newSite(t, db, web.Options{})
	f.account("ada", false)
	for i := 0; i < 55; i++ {
		f.ask(f.alice, "Question "+strings.Repeat("x", i+1))
	}
	b := f.signedIn(t, "ada")
	seen := map[string]bool{}
	target := "/"
	for pages := 0; target != ""; pages++ {
		if pages > 2 {
			t.Fatal("more than two pages for 55 threads")
		}
		p := b.get(target).must(t, http.StatusOK)
		p.find("[data-thread-id]").Each(func(_ int, s *goquery.Selection) {
			id := s.AttrOr("data-thread-id", "")
			if seen[id] {
				t.Errorf("%s is on two pages", id)
			}
			seen[id] = true
		})
		target = p.find(`a[rel="next"]`).AttrOr("href", "")
	}
	if len(seen) != 55 {
		t.Errorf("the pages list %d threads, want 55", len(seen))
	}
}

// The thread page: the badge, every message with its hooks nested by parent, author kinds,
// provenance, the lock holder's label, whose turn it is, the timeline, and bodies that are
// text.
func TestThreadPage(t *testing.T) {
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		f := newSite(t, db, web.Options{})
		f.account("ada", false)
		thread, ask := f.ask(f.alice, "Which port?")
		answer := f.send(f.bob, `{"kind":"answer","thread":"`+thread+`","from":{"extension":"w2"},`+
			`"body":"8080 <script>alert(1)</script><img src=x onerror=alert(2)>\nsee https://example.org/x.",`+
			`"provenance":{"model":"m-1","client":"c-1"}}`).at("message", "id")
		note := f.send(f.mod, `{"kind":"note","thread":"`+thread+`","parent":"`+answer+`","body":"Looks right."}`).at("message", "id")

		b := f.signedIn(t, "ada")
		p := b.get("/threads/"+thread).must(t, http.StatusOK)
		badge := p.find("[data-state]")
		if badge.Length() != 1 || badge.AttrOr("data-state", "") != "answered" || badge.AttrOr("data-confirmed", "") != "false" {
			t.Fatalf("badge: %d elements, data-state=%q data-confirmed=%q", badge.Length(), badge.AttrOr("data-state", ""), badge.AttrOr("data-confirmed", ""))
		}
		for _, id := range []string{ask, answer, note} {
			if p.find(`[data-message-id="`+id+`"]`).Length() != 1 {
				t.Errorf("no single element with data-message-id=%s", id)
			}
		}
		nested := p.find(`[data-message-id="` + ask + `"]`).Parent().Find(`[data-message-id="` + note + `"]`)
		if nested.Length() != 1 {
			t.Error("the note is not nested below the ask")
		}
		msg := p.find(`[data-message-id="` + answer + `"]`)
		if !msg.HasClass("author-llm") || !strings.Contains(msg.Text(), "ainotes:bob") || !strings.Contains(msg.Text(), "w2") ||
			!strings.Contains(msg.Find(".provenance").Text(), "m-1") || !strings.Contains(msg.Find(".provenance").Text(), "c-1") {
			t.Errorf("the answer lacks its author, extension, kind or provenance: %q", msg.Text())
		}
		if p.find(".body script, .body img").Length() != 0 || !strings.Contains(msg.Find(".body").Text(), "<script>alert(1)</script>") {
			t.Errorf("the body's markup became elements or vanished: %q", msg.Find(".body").Text())
		}
		if a := msg.Find(".body a"); a.AttrOr("href", "") != "https://example.org/x" || !strings.Contains(a.AttrOr("rel", ""), "nofollow") {
			t.Errorf("the URL in the body is not a nofollow link: %q", a.AttrOr("href", ""))
		}
		if got := p.text(`[data-message-id="` + note + `"] .lock-label`); got != "AI · Moderation" {
			t.Errorf("the moderator's note reads %q, want AI · Moderation", got)
		}
		if got := p.text("#thread-state [data-awaiting]"); got != "waiting for ainotes:alice" {
			t.Errorf("whose turn: %q", got)
		}
		if n := p.find("#timeline [data-event-id]").Length(); n != 2 {
			t.Errorf("%d events in the timeline, want open and answered", n)
		}
		if !strings.Contains(p.text("#timeline"), "unconfirmed") {
			t.Errorf("the timeline does not show the answer unconfirmed: %q", p.text("#timeline"))
		}
		for _, action := range []string{"confirm", "mark", "reply"} {
			if p.find(`[data-action="`+action+`"]`).Length() == 0 {
				t.Errorf("no %s control", action)
			}
		}
		// The number alone names the thread too; unknown and malformed ids are not found.
		b.get("/threads/"+strings.TrimPrefix(thread, "th_")).must(t, http.StatusOK)
		b.get("/threads/th_999").must(t, http.StatusNotFound)
		b.get("/threads/msg_1").must(t, http.StatusNotFound)
		// ?reply= opens the form under that message.
		r := b.get("/threads/"+thread+"?reply="+answer).must(t, http.StatusOK)
		if r.find(`[data-message-id="`+answer+`"] form input[name="parent"][value="`+answer+`"]`).Length() != 1 {
			t.Error("?reply= does not open a reply form under the message")
		}
	})
}
