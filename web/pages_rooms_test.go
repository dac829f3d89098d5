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

// The rooms in the pages (OPERATOR.md): the navigation lists them (data-room-id) with their
// unconfirmed proposals, /rooms/{name} lists a room's threads and its inner rooms', the
// thread page names its room and moves it (data-action="move"), administrators create,
// rename and archive rooms, and a token is made with rooms (field rooms); plain forms that
// redirect back.
func TestRoomPages(t *testing.T) {
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		f := newSite(t, db, web.Options{})
		f.account("root", true)
		f.account("ada", false)
		admin := f.signedIn(t, "root")

		admin.get("/rooms").must(t, http.StatusOK)
		admin.post("/rooms", url.Values{"name": {"research"}, "title": {"Research «R»"}, "description": {"What we find out"}}).redirectsTo(t, "/rooms")
		admin.get("/rooms")
		admin.post("/rooms", url.Values{"name": {"inner"}, "title": {"Inner"}, "parent": {"research"}}).redirectsTo(t, "/rooms")
		admin.get("/rooms")
		refused := admin.post("/rooms", url.Values{"name": {"deeper"}, "title": {"Deeper"}, "parent": {"inner"}})
		if refused.status != http.StatusBadRequest || refused.find(`input[name="name"]`).AttrOr("value", "") != "deeper" || refused.find(".refusal").Length() == 0 {
			t.Errorf("a room inside an inner room: %d, the form not kept with its refusal", refused.status)
		}

		th := f.proposed("In general for now")
		b := f.signedIn(t, "ada")
		home := b.get("/").must(t, http.StatusOK)
		var rooms []string
		home.find("nav [data-room-id]").Each(func(_ int, s *goquery.Selection) { rooms = append(rooms, s.AttrOr("data-room-id", "")) })
		if strings.Join(rooms, " ") != "rm_1 rm_2 rm_3" {
			t.Errorf("the navigation lists rooms %v", rooms)
		}
		if n := home.find(`nav [data-room-id="rm_1"] [data-unconfirmed]`).AttrOr("data-unconfirmed", ""); n != "1" {
			t.Errorf("general's unconfirmed proposals: %q, want 1", n)
		}
		if home.find(`tr[data-thread-id="`+th+`"] [data-room-id="rm_1"]`).Length() != 1 {
			t.Error("the thread list does not name the thread's room")
		}

		page := b.get("/threads/"+th).must(t, http.StatusOK)
		if page.find(`[data-thread-room="rm_1"]`).Length() != 1 || page.find(`[data-action="move"]`).Length() != 1 {
			t.Fatal("the thread page does not name its room or lacks the room picker")
		}
		b.post("/threads/"+th+"/move", url.Values{"room": {"inner"}}).redirectsTo(t, "/threads/"+th)
		if b.get("/threads/"+th).find(`[data-thread-room="rm_3"]`).Length() != 1 {
			t.Error("the move did not take the thread into inner")
		}
		research := b.get("/rooms/research").must(t, http.StatusOK)
		if research.find(`[data-thread-id="`+th+`"]`).Length() != 1 || !strings.Contains(research.text("h1"), "Research «R»") {
			t.Error("/rooms/research does not list its inner room's thread")
		}
		if b.get("/rooms/rm_1").find(`[data-thread-id="`+th+`"]`).Length() != 0 {
			t.Error("general still lists the moved thread")
		}
		b.get("/rooms/nowhere").must(t, http.StatusNotFound)
		b.get("/rooms").must(t, http.StatusForbidden)

		admin.get("/rooms")
		admin.post("/rooms/inner", url.Values{"title": {"Inner, renamed"}, "description": {""}, "archived": {"1"}}).redirectsTo(t, "/rooms")
		list := admin.get("/rooms").must(t, http.StatusOK)
		row := list.find(`tr[data-room-id="rm_3"]`)
		if !strings.Contains(row.Text(), "Inner, renamed") || row.Find(`input[name="archived"][checked]`).Length() != 1 {
			t.Errorf("the renamed, archived room: %q", row.Text())
		}

		tokens := admin.get("/tokens").must(t, http.StatusOK)
		if tokens.find(`input[name="rooms"]`).Length() != 1 {
			t.Fatal("the token form has no rooms field")
		}
		admin.post("/tokens", url.Values{"handle": {"team"}, "rights": {"read", "write"}, "rooms": {"research"}}).redirectsTo(t, "/tokens")
		listed := admin.get("/tokens")
		if !strings.Contains(listed.find(`[data-token-rooms]`).Text(), "research") {
			t.Errorf("the token list does not show the token's rooms: %q", listed.find(`[data-token-rooms]`).Text())
		}
		bad := admin.post("/tokens", url.Values{"handle": {"lost"}, "rights": {"read"}, "rooms": {"nowhere"}})
		if bad.status != http.StatusBadRequest || bad.find(`input[name="rooms"]`).AttrOr("value", "") != "nowhere" {
			t.Errorf("a token with an unknown room: %d", bad.status)
		}

		// German.
		de := b.get("/?lang=de").must(t, http.StatusOK)
		if !strings.Contains(de.body, "Raum") {
			t.Error("the German thread list does not say Raum")
		}
	})
}
