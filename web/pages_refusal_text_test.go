package web_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/parleyforum/parley/protocol"
	"github.com/parleyforum/parley/storage"
	"github.com/parleyforum/parley/storage/storagetest"
	"github.com/parleyforum/parley/web"
)

// The pages say what is wrong, in the reader's language: a room's name that is taken, a
// number or reads as an id, and a blank reason for hiding — not the words of a refused
// message's text ("The message is not valid …"), without and with htmx; and the room form's
// pattern is the server's rule.
func TestPagesSayWhatIsRefused(t *testing.T) {
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		f := newSite(t, db, web.Options{})
		f.account("root", true)
		admin := f.signedIn(t, "root")
		name := admin.get("/rooms").must(t, http.StatusOK).find(`#room-create input[name="name"]`)
		if name.AttrOr("pattern", "") != protocol.RoomNamePattern || name.AttrOr("maxlength", "") != "64" {
			t.Errorf("the room form's name takes pattern %q, maxlength %q; want the server's rule",
				name.AttrOr("pattern", ""), name.AttrOr("maxlength", ""))
		}
		admin.post("/rooms", url.Values{"name": {"research"}, "title": {"Research"}}).redirectsTo(t, "/rooms")
		generic := []string{"The message is not valid", "Die Nachricht ist ungültig"}
		says := func(what, text, want string) {
			t.Helper()
			if !strings.Contains(text, want) {
				t.Errorf("%s says %q, want %q", what, text, want)
			}
			for _, g := range generic {
				if strings.Contains(text, g) {
					t.Errorf("%s says %q, the words of a message's text", what, text)
				}
			}
		}
		for _, tc := range []struct{ name, lang, want string }{
			{"research", "en", "A room named research exists already"},
			{"research", "de", "Einen Raum namens research gibt es schon"},
			{"123", "en", "must not be a number"},
			{"123", "de", "darf keine Zahl sein"},
			{"rm_9", "en", "must not begin with rm_"},
			{"RM_9", "de", "darf nicht mit rm_ beginnen"},
		} {
			admin.get("/rooms")
			p := admin.post("/rooms", url.Values{"name": {tc.name}, "title": {"Like another"}}, "Accept-Language", tc.lang)
			if p.status != http.StatusBadRequest {
				t.Errorf("room %q: %d, want 400", tc.name, p.status)
			}
			says("room "+tc.name+" ("+tc.lang+")", p.text(`#room-create .refusal-text`), tc.want)
		}

		thread, _ := f.ask(f.alice, "What should stay hidden?")
		msg := f.send(f.bob, `{"kind":"answer","thread":"`+thread+`","body":"This, perhaps."}`).at("message", "id")
		for _, tc := range []struct {
			lang, want string
			htmx       bool
		}{
			{"en", "Give a reason for hiding it: 1 to 200 characters.", false},
			{"de", "Geben Sie einen Grund für das Verbergen an: 1 bis 200 Zeichen.", false},
			{"en", "Give a reason for hiding it", true},
			{"de", "Geben Sie einen Grund", true},
		} {
			admin.get("/threads/" + thread)
			headers := []string{"Accept-Language", tc.lang}
			if tc.htmx {
				headers = append(headers, htmx...)
			}
			p := admin.post("/threads/"+thread+"/messages/"+msg+"/hide", url.Values{"reason": {"   "}}, headers...)
			if p.status != http.StatusBadRequest {
				t.Errorf("a blank reason (%s, htmx %v): %d, want 400", tc.lang, tc.htmx, p.status)
			}
			says("a blank reason ("+tc.lang+")", p.text(`#hide-`+msg+`-error .refusal-text`), tc.want)
		}
	})
}
