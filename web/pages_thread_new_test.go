package web_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"github.com/parleyforum/parley/storage"
	"github.com/parleyforum/parley/storage/storagetest"
	"github.com/parleyforum/parley/web"
)

// A human opens a thread (PROTOCOL.md § 3, § 16): / and a room's page link GET /threads/new
// with that room preselected; its picker offers the rooms that take a thread (no archived
// room, nor one inside it); POST /threads opens the thread in the room chosen and goes to
// it; the same form sent twice (its idempotency key) opens one thread; a refusal comes back
// beside its field with what was typed, in the reader's language.
func TestNewThreadPage(t *testing.T) {
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		f := newSite(t, db, web.Options{})
		f.account("root", true)
		f.account("bea", false)
		admin := f.signedIn(t, "root")
		admin.get("/rooms")
		for _, room := range []url.Values{
			{"name": {"research"}, "title": {"Research"}},
			{"name": {"inner"}, "title": {"Inner"}, "parent": {"research"}},
			{"name": {"attic"}, "title": {"Attic"}},
			{"name": {"box"}, "title": {"Box"}, "parent": {"attic"}},
		} {
			admin.post("/rooms", room).redirectsTo(t, "/rooms")
			admin.get("/rooms")
		}
		admin.post("/rooms/attic", url.Values{"title": {"Attic"}, "archived": {"1"}}).redirectsTo(t, "/rooms")

		b := f.signedIn(t, "bea")
		if href := b.get("/").find(`a[data-nav="thread-new"]`).AttrOr("href", ""); href != "/threads/new" {
			t.Errorf("/ links the new thread as %q", href)
		}
		if href := b.get("/rooms/research").find(`a[data-nav="thread-new"]`).AttrOr("href", ""); href != "/threads/new?room=research" {
			t.Errorf("/rooms/research links the new thread as %q", href)
		}
		if b.get("/rooms/attic").find(`a[data-nav="thread-new"]`).Length() != 0 {
			t.Error("an archived room's page offers to open a thread in it")
		}

		form := b.get("/threads/new?room=research").must(t, http.StatusOK)
		var offered []string
		form.find(`select[name="room"] option`).Each(func(_ int, s *goquery.Selection) { offered = append(offered, s.AttrOr("value", "")) })
		if strings.Join(offered, " ") != "general research inner" {
			t.Errorf("the picker offers %v, want general research inner", offered)
		}
		if got := form.find(`select[name="room"] option[selected]`).AttrOr("value", ""); got != "research" {
			t.Errorf("the picker preselects %q, want research", got)
		}
		if got := b.get("/threads/new").find(`select[name="room"] option[selected]`).AttrOr("value", ""); got != "general" {
			t.Errorf("without a room the picker preselects %q, want general", got)
		}
		if form.find(`form[action="/threads"] [data-action="thread-create"]`).Length() != 1 || form.find(`input[name="key"]`).AttrOr("value", "") == "" {
			t.Fatal("the form has no thread-create control or no idempotency key")
		}

		sent := url.Values{"title": {"Where do the logs go?"}, "body": {"The disk fills up by noon."}, "room": {"inner"},
			"key": {form.find(`input[name="key"]`).AttrOr("value", "")}}
		opened := b.post("/threads", clone(sent))
		location := opened.header.Get("Location")
		if opened.status != http.StatusSeeOther || !strings.HasPrefix(location, "/threads/th_") {
			t.Fatalf("opening a thread: %d to %q\n%s", opened.status, location, opened.body)
		}
		thread := b.get(location).must(t, http.StatusOK)
		if thread.find(`[data-thread-room="rm_3"]`).Length() != 1 || !strings.Contains(thread.text("h1"), "Where do the logs go?") {
			t.Errorf("the new thread is not in inner or not titled by the title: %q", thread.text("h1"))
		}
		if !strings.Contains(thread.text("[data-message-id]"), "The disk fills up by noon.") {
			t.Error("the new thread's first message lacks the text")
		}
		b.post("/threads", clone(sent)).redirectsTo(t, location)
		if n, _ := db.NewSelect().Table("threads").Count(context.Background()); n != 1 {
			t.Errorf("the form sent twice under its key made %d threads, want 1", n)
		}

		// Refusals, each beside its field, with what was typed; nothing is written.
		long := strings.Repeat("x", 501)
		for _, c := range []struct {
			name   string
			form   url.Values
			status int
			field  string
			reason string
		}{
			{"no title, no text", url.Values{"title": {" "}, "body": {""}, "room": {"general"}}, 400, "title", "invalid_body"},
			{"a text too long", url.Values{"title": {"Long"}, "body": {long}, "room": {"general"}}, 400, "body", "invalid_body"},
			{"an archived room", url.Values{"title": {"In the attic"}, "room": {"attic"}}, 409, "room", "invalid_transition"},
			{"a room inside an archived one", url.Values{"title": {"In the box"}, "room": {"box"}}, 409, "room", "invalid_transition"},
			{"no such room", url.Values{"title": {"Nowhere"}, "room": {"nowhere"}}, 404, "room", "not_found"},
			{"not a room", url.Values{"title": {"Bad"}, "room": {"Not A Room!"}}, 400, "room", "invalid_body"},
		} {
			t.Run(c.name, func(t *testing.T) {
				b.get("/threads/new")
				res := b.post("/threads", clone(c.form))
				slot := res.find("#thread-new-" + c.field + "-error [data-reason]")
				if res.status != c.status || slot.AttrOr("data-reason", "") != c.reason {
					t.Errorf("%d with %q beside %s, want %d %s\n%s", res.status, slot.AttrOr("data-reason", ""), c.field, c.status, c.reason, res.body)
				}
				if got := res.find(`input[name="title"]`).AttrOr("value", ""); got != c.form.Get("title") {
					t.Errorf("the title typed is not kept: %q", got)
				}
				if got := res.find(`textarea[name="body"]`).Text(); got != c.form.Get("body") {
					t.Errorf("the text typed is not kept: %d characters of %d", len(got), len(c.form.Get("body")))
				}
				if n, _ := db.NewSelect().Table("threads").Count(context.Background()); n != 1 {
					t.Errorf("a refused thread was written: %d threads", n)
				}
			})
		}
		de := b.post("/threads?lang=de", url.Values{"title": {"Dachboden"}, "room": {"attic"}})
		if !strings.Contains(de.text("#thread-new-room-error"), "archiviert") {
			t.Errorf("the German refusal beside the room reads %q", de.text("#thread-new-room-error"))
		}

		// Only a human signed in opens a thread.
		anon := f.browser(t)
		if res := anon.get("/threads/new"); res.status != http.StatusSeeOther || !strings.HasPrefix(res.header.Get("Location"), "/login") {
			t.Errorf("/threads/new without a session: %d to %q, want the login", res.status, res.header.Get("Location"))
		}
	})
}
