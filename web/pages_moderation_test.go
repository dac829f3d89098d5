package web_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/parleyforum/parley/protocol"
	"github.com/parleyforum/parley/storage"
	"github.com/parleyforum/parley/storage/storagetest"
	"github.com/parleyforum/parley/web"
)

// state reads a thread's state and whether it is confirmed through the API.
func (f *forum) state(thread string) (string, bool) {
	f.t.Helper()
	r := f.must(f.get("/v1/threads/"+thread, f.alice), http.StatusOK)
	return r.at("thread", "state"), r.at("thread", "state_confirmed_at") != ""
}

// proposed opens a thread as alice and lets bob answer it: an unconfirmed "answered".
func (f *forum) proposed(question string) string {
	f.t.Helper()
	return f.proposedWith(question, "A model's answer.")
}

// proposedWith is proposed with bob's answer reading body.
func (f *forum) proposedWith(question, body string) string {
	f.t.Helper()
	thread, _ := f.ask(f.alice, question)
	answer, err := json.Marshal(map[string]string{"kind": "answer", "thread": thread, "body": body})
	if err != nil {
		f.t.Fatal(err)
	}
	f.send(f.bob, string(answer))
	return thread
}

// Confirm and mark without JavaScript: a form post, 303 back to the thread, the badge
// changed; with htmx: the state panel alone, the timeline out of band, no page frame.
func TestConfirmAndMark(t *testing.T) {
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		f := newSite(t, db, web.Options{})
		f.account("ada", false)
		b := f.signedIn(t, "ada")

		plain := f.proposed("Confirmed without JavaScript?")
		b.get("/threads/" + plain)
		b.post("/threads/"+plain+"/confirm", url.Values{"view": {"thread"}}).redirectsTo(t, "/threads/"+plain)
		if state, confirmed := f.state(plain); state != "answered" || !confirmed {
			t.Fatalf("after confirm: %s, confirmed %v", state, confirmed)
		}
		p := b.get("/threads/" + plain)
		if p.find(`[data-state="answered"][data-confirmed="true"]`).Length() != 1 || p.find(`[data-action="confirm"]`).Length() != 0 {
			t.Error("after confirm the badge is not confirmed, or the confirm control is still there")
		}
		if got := strings.Join(strings.Fields(p.text("#thread-state")), " "); !strings.Contains(got, "by a model · confirmed by human:ada") {
			t.Errorf("the state panel does not name who confirmed the model's proposal: %q", got)
		}
		b.post("/threads/"+plain+"/mark", url.Values{"state": {"rejected"}}).redirectsTo(t, "/threads/"+plain)
		if state, confirmed := f.state(plain); state != "rejected" || !confirmed {
			t.Fatalf("after mark rejected: %s, confirmed %v", state, confirmed)
		}
		if got := strings.Join(strings.Fields(b.get("/threads/"+plain).text("#thread-state")), " "); !strings.Contains(got, "by a human · confirmed by human:ada") {
			t.Errorf("the state panel does not name the human whose mark confirmed itself: %q", got)
		}

		live := f.proposed("Confirmed with htmx?")
		b.get("/threads/" + live)
		res := b.post("/threads/"+live+"/confirm", url.Values{"view": {"thread"}}, htmx...).must(t, http.StatusOK)
		if res.find("html > body > main").Length() != 0 || strings.Contains(res.body, "<!doctype") {
			t.Error("the htmx answer is a whole page")
		}
		if res.find(`#thread-state [data-state="answered"][data-confirmed="true"]`).Length() != 1 {
			t.Errorf("the htmx answer has no confirmed badge in #thread-state:\n%s", res.body)
		}
		if res.find(`#timeline[hx-swap-oob="true"] [data-event-id]`).Length() != 3 {
			t.Errorf("the htmx answer lacks the timeline out of band with the confirm event:\n%s", res.body)
		}
		res = b.post("/threads/"+live+"/mark", url.Values{"state": {"closed"}}, htmx...).must(t, http.StatusOK)
		if res.find(`#thread-state [data-state="closed"][data-confirmed="true"]`).Length() != 1 {
			t.Errorf("mark with htmx: no closed badge:\n%s", res.body)
		}
	})
}

// A refusal of the operation layer shows beside the control that was used, in the reader's
// language, with its reason, and changes nothing: as the page again without JavaScript, as a
// fragment retargeted to the control's error slot with htmx.
func TestRefusalsShowBesideTheControl(t *testing.T) {
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		f := newSite(t, db, web.Options{})
		f.account("ada", false)
		b := f.signedIn(t, "ada")
		thread, ask := f.ask(f.alice, "Refusals?")
		b.get("/threads/" + thread)

		// confirm on a confirmed state: invalid_transition, 409.
		p := b.post("/threads/"+thread+"/confirm", url.Values{"view": {"thread"}}).must(t, http.StatusConflict)
		if p.find(`#confirm-error [data-reason="invalid_transition"]`).Length() != 1 {
			t.Errorf("confirm of a confirmed state: no invalid_transition beside the control:\n%s", p.body)
		}
		frag := b.post("/threads/"+thread+"/confirm", url.Values{"view": {"thread"}}, htmx...).must(t, http.StatusConflict)
		if frag.header.Get("HX-Retarget") != "#confirm-error" || frag.find(`#confirm-error [data-reason="invalid_transition"]`).Length() != 1 {
			t.Errorf("htmx refusal: HX-Retarget %q:\n%s", frag.header.Get("HX-Retarget"), frag.body)
		}

		// mark with a state that is none: invalid_body, beside the mark control, in German.
		p = b.post("/threads/"+thread+"/mark?lang=de", url.Values{"state": {"finished"}}).must(t, http.StatusBadRequest)
		if got := p.text(`#mark-error [data-reason="invalid_body"]`); !strings.Contains(got, "ungültig") {
			t.Errorf("the refused mark reads %q, want the German reason", got)
		}
		b.get("/threads/" + thread + "?lang=en")

		// An empty body, an unknown kind, a parent that is none: invalid_body or not_found.
		for _, tc := range []struct {
			form   url.Values
			status int
			reason string
		}{
			{url.Values{"kind": {"note"}, "body": {"   "}}, http.StatusBadRequest, "invalid_body"},
			{url.Values{"kind": {"shout"}, "body": {"x"}}, http.StatusBadRequest, "invalid_body"},
			{url.Values{"kind": {"note"}, "body": {"x"}, "parent": {"msg_999"}}, http.StatusNotFound, "not_found"},
			{url.Values{"kind": {"note"}, "body": {"x"}, "parent": {"<b>"}}, http.StatusBadRequest, "invalid_body"},
		} {
			p := b.post("/threads/"+thread+"/messages", tc.form).must(t, tc.status)
			if p.find(`#compose-error [data-reason="`+tc.reason+`"]`).Length() != 1 {
				t.Errorf("reply %v: no %s beside the thread's form:\n%s", tc.form, tc.reason, p.body)
			}
		}
		// Close as a human, confirmed at once; then the closed thread takes nothing but reopen.
		b.post("/threads/"+thread+"/messages", url.Values{"kind": {"close"}, "body": {"Done."}}).must(t, http.StatusSeeOther)
		p = b.post("/threads/"+thread+"/messages", url.Values{"kind": {"note"}, "body": {"late"}}).must(t, http.StatusConflict)
		if p.find(`#compose-error [data-reason="thread_closed"]`).Length() != 1 {
			t.Errorf("a note on a confirmed closed thread: no thread_closed:\n%s", p.body)
		}
		// Under a message: beside the reply form under it, the text and kind kept.
		p = b.post("/threads/"+thread+"/messages", url.Values{"kind": {"answer"}, "parent": {ask}, "body": {"too late"}}).must(t, http.StatusConflict)
		form := p.find("#compose-" + ask)
		if form.Find(`[data-reason="thread_closed"]`).Length() != 1 || form.Find("textarea").Text() != "too late" {
			t.Errorf("thread_closed is not beside the reply form under %s with the text kept:\n%s", ask, p.body)
		}
		if got := form.Find(`select[name="kind"] option[selected]`).AttrOr("value", ""); got != "answer" {
			t.Errorf("the kind sent is not kept: %q", got)
		}
		frag = b.post("/threads/"+thread+"/messages", url.Values{"kind": {"answer"}, "parent": {ask}, "body": {"x"}}, htmx...).must(t, http.StatusConflict)
		if frag.header.Get("HX-Retarget") != "#compose-"+ask+"-error" || frag.find(`[data-reason="thread_closed"]`).Length() != 1 {
			t.Errorf("htmx thread_closed retargets %q:\n%s", frag.header.Get("HX-Retarget"), frag.body)
		}
		if n := strings.Count(string(f.must(f.get("/v1/threads/"+thread, f.alice), http.StatusOK).body), `"id":"msg_`); n != 2 {
			t.Errorf("%d messages after the refusals, want the ask and the close", n)
		}
		b.get("/threads/th_999")
		b.post("/threads/th_999/confirm", nil).must(t, http.StatusNotFound)
		b.post("/threads/x/confirm", nil).must(t, http.StatusNotFound)
	})
}

// A human replies with any of the nine kinds, under any message: without JavaScript 303 to
// the new message; with htmx the message tree, the state and the timeline swap.
func TestHumanReplies(t *testing.T) {
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		f := newSite(t, db, web.Options{})
		f.account("ada", false)
		b := f.signedIn(t, "ada")
		thread, ask := f.ask(f.alice, "Will a human answer?")
		b.get("/threads/" + thread)
		res := b.post("/threads/"+thread+"/messages", url.Values{"kind": {"answer"}, "parent": {ask}, "body": {"Yes, I will."}})
		if res.status != http.StatusSeeOther || !strings.HasPrefix(res.header.Get("Location"), "/threads/"+thread+"#msg_") {
			t.Fatalf("reply: %d to %q", res.status, res.header.Get("Location"))
		}
		p := b.get("/threads/" + thread)
		mine := p.find(`[data-message-id="` + ask + `"]`).Parent().Find(".author-human")
		if mine.Length() != 1 || !strings.Contains(mine.Text(), "human:ada") || !strings.Contains(mine.Text(), "Yes, I will.") {
			t.Fatalf("the human's answer is not shown under the ask as a human's: %q", mine.Text())
		}
		if p.find(`[data-state="answered"][data-confirmed="true"]`).Length() != 1 {
			t.Error("a human's answer is not a confirmed state")
		}

		frag := b.post("/threads/"+thread+"/messages", url.Values{"kind": {"decide"}, "body": {"Decided: 8080."}}, htmx...).must(t, http.StatusOK)
		if frag.find(`#messages [data-message-id]`).Length() != 3 ||
			frag.find(`#thread-state[hx-swap-oob="true"] [data-state="decided"][data-confirmed="true"]`).Length() != 1 ||
			frag.find(`#timeline[hx-swap-oob="true"]`).Length() != 1 {
			t.Errorf("the htmx reply does not swap the tree, the state and the timeline:\n%s", frag.body)
		}
		if strings.Contains(frag.body, "<html") {
			t.Error("the htmx reply is a whole page")
		}
		for _, kind := range []string{"reopen", "defer", "reopen", "reject", "reopen", "obsolete", "reopen", "ask", "note", "close"} {
			b.post("/threads/"+thread+"/messages", url.Values{"kind": {kind}, "body": {"A human's " + kind + "."}}).must(t, http.StatusSeeOther)
		}
		if state, confirmed := f.state(thread); state != "closed" || !confirmed {
			t.Errorf("after the human's acts: %s, confirmed %v; want closed and confirmed", state, confirmed)
		}
	})
}

// A thread at its size limit refuses the human's reply with limit_exceeded beside the form.
func TestReplyOverTheLimit(t *testing.T) {
	db := storagetest.Open(t, storage.SQLite)
	limits := protocol.DefaultLimits()
	limits.ThreadMaxMessages = 2
	f := newSite(t, db, web.Options{Limits: limits})
	f.account("ada", false)
	thread := f.proposed("Full soon?")
	b := f.signedIn(t, "ada")
	b.get("/threads/" + thread)
	p := b.post("/threads/"+thread+"/messages", url.Values{"kind": {"note"}, "body": {"one too many"}}).must(t, http.StatusConflict)
	if p.find(`#compose-error [data-reason="limit_exceeded"]`).Length() != 1 || p.find("#compose textarea").Text() != "one too many" {
		t.Errorf("no limit_exceeded beside the form with the text kept:\n%s", p.body)
	}
}

// While the database is gone the pages answer 503 with a page that says so, and work again
// when it returns.
func TestPagesUnavailable(t *testing.T) {
	db := storagetest.Open(t, storage.Postgres)
	f := newSite(t, db, web.Options{})
	f.account("ada", false)
	thread := f.proposed("Still there?")
	b := f.signedIn(t, "ada")
	b.get("/threads/" + thread)

	restore := takeDown(t, db)
	for _, p := range []*page{
		b.get("/threads/"+thread, "Accept-Language", "de"),
		b.post("/threads/"+thread+"/confirm", nil, "Accept-Language", "de"),
	} {
		if p.status != http.StatusServiceUnavailable || !strings.Contains(p.body, "Datenbank") {
			t.Errorf("with the database down: %d\n%s", p.status, p.body)
		}
	}
	restore()
	b.post("/threads/"+thread+"/confirm", nil).redirectsTo(t, "/threads/"+thread)
}
