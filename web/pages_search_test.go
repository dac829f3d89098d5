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

// The search page: results of the search operation, each with data-message-id and a link to
// the message in its thread; the words looked for marked, a hostile body escaped; filters
// and paging as GET parameters; an empty query refused in the reader's language; the box in
// every page's header.
func TestSearchPage(t *testing.T) {
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		f := newSite(t, db, web.Options{})
		f.account("ada", false)
		thread, _ := f.ask(f.alice, "Does pgbouncer keep prepared statements?")
		hostile := f.send(f.bob, `{"kind":"answer","thread":"`+thread+`","body":"pgbouncer <script>alert(1)</script> & <b>bold</b>"}`).at("message", "id")
		b := f.signedIn(t, "ada")

		if box := b.get("/").find(`header form[role="search"][action="/search"][method="get"]`); box.Find(`label[for="site-search"]`).Length() != 1 ||
			box.Find(`input#site-search[name="q"]`).Length() != 1 {
			t.Errorf("the page header has no labelled GET search box")
		}

		res := b.get("/search?q="+url.QueryEscape("pgbouncer")).must(t, http.StatusOK)
		hits := res.find(".search-hit[data-message-id]")
		if hits.Length() != 2 {
			t.Fatalf("%d results for pgbouncer, want 2\n%s", hits.Length(), res.body)
		}
		hit := res.find(`[data-message-id="` + hostile + `"]`)
		if hit.Find(`a[href="/threads/`+thread+`#`+hostile+`"]`).Text() != "Does pgbouncer keep prepared statements?" {
			t.Errorf("the result does not link its message in its thread by title: %s", goquery.NewDocumentFromNode(hit.Nodes[0]).Text())
		}
		if !strings.Contains(hit.Text(), "Answer") || !strings.Contains(hit.Text(), "ainotes:bob") || hit.Find("time").Length() != 1 {
			t.Errorf("the result does not show kind, author and time: %q", hit.Text())
		}
		snippet := hit.Find(".snippet")
		if snippet.Find("script, b").Length() != 0 || !strings.Contains(res.body, "&lt;script&gt;alert(1)&lt;/script&gt;") {
			t.Errorf("the body's markup was not escaped:\n%s", res.body)
		}
		if marks := snippet.Find("mark"); marks.Length() != 1 || marks.Text() != "pgbouncer" {
			t.Errorf("marks %q, want pgbouncer alone", marks.Text())
		}
		if got := snippet.Text(); got != "pgbouncer <script>alert(1)</script> & <b>bold</b>" {
			t.Errorf("the snippet reads %q, want the body as text", got)
		}

		if only := b.get("/search?q=pgbouncer&kind=ask").must(t, http.StatusOK).find("[data-message-id]"); only.Length() != 1 ||
			only.AttrOr("data-message-id", "") == hostile {
			t.Errorf("kind=ask shows %d results, want the question alone", only.Length())
		}
		if none := b.get("/search?q=pgbouncer&state=closed").must(t, http.StatusOK); none.find("[data-message-id]").Length() != 0 ||
			none.find(".empty").Length() != 1 {
			t.Errorf("state=closed shows results or no empty note")
		}

		for i := 0; i < 22; i++ {
			f.send(f.bob, `{"kind":"note","thread":"`+thread+`","body":"pgbouncer note"}`)
		}
		first := b.get("/search?q=pgbouncer").must(t, http.StatusOK)
		more := first.find(`nav.pager a[rel="next"]`)
		if first.find("[data-message-id]").Length() != 20 || more.Length() != 1 {
			t.Fatalf("the first page has %d results and %d more links, want 20 and 1", first.find("[data-message-id]").Length(), more.Length())
		}
		seen := map[string]bool{}
		first.find("[data-message-id]").Each(func(_ int, s *goquery.Selection) { seen[s.AttrOr("data-message-id", "")] = true })
		second := b.get(more.AttrOr("href", "")).must(t, http.StatusOK)
		second.find("[data-message-id]").Each(func(_ int, s *goquery.Selection) {
			if seen[s.AttrOr("data-message-id", "")] {
				t.Errorf("the second page repeats %s", s.AttrOr("data-message-id", ""))
			}
			seen[s.AttrOr("data-message-id", "")] = true
		})
		if len(seen) != 24 || second.find(`nav.pager`).Length() != 0 {
			t.Errorf("two pages hold %d results, want all 24 and no further page", len(seen))
		}

		refused := b.get("/search?q=&lang=de").must(t, http.StatusBadRequest)
		if r := refused.find(`.refusal [data-reason="invalid_body"]`); r.Length() != 1 || !strings.Contains(r.Text(), "mindestens einem Wort") {
			t.Errorf("an empty query is not refused in German: %q", refused.text(".refusal"))
		}
		if b.get("/search?q="+strings.Repeat("x", 201)).must(t, http.StatusBadRequest).find(`[data-reason="invalid_body"]`).Length() != 1 {
			t.Errorf("a query of 201 characters is not refused")
		}
		if b.get("/search").must(t, http.StatusOK).find(".refusal, [data-message-id]").Length() != 0 {
			t.Errorf("the page without q shows a refusal or results")
		}
	})
}

// A reader who may not read is sent to sign in; with public reading, anyone searches.
func TestSearchPageReaders(t *testing.T) {
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		closed := newSite(t, db, web.Options{})
		closed.browser(t).get("/search?q=x").redirectsTo(t, "/login?next="+url.QueryEscape("/search?q=x"))
		// The same forum, served with public reading.
		open := newSite(t, db, web.Options{PublicRead: true})
		_, asked := open.ask(open.alice, "A public question")
		if open.browser(t).get("/search?q=public").must(t, http.StatusOK).find(`[data-message-id="`+asked+`"]`).Length() != 1 {
			t.Errorf("with public reading, an anonymous reader does not find %s", asked)
		}
	})
}
