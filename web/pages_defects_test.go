package web_test

import (
	"net/http"
	"net/url"
	"testing"

	"github.com/parleyforum/parley/storage"
	"github.com/parleyforum/parley/storage/storagetest"
	"github.com/parleyforum/parley/web"
)

// Defects a newcomer met on the thread page (issue 21): the reply form under a message
// preselected answer (a human posted an ANSWER without noticing); a confirmed closed thread
// offered the composer with every kind and Reply on each message, refused only after
// sending; the message box took more than the body limit and refused it only after sending.
func TestComposeDefaults(t *testing.T) {
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		f := newSite(t, db, web.Options{})
		f.account("ada", false)
		b := f.signedIn(t, "ada")
		thread, msg := f.ask(f.alice, "Which kind does a reply start as?")

		p := b.get("/threads/"+thread+"?reply="+msg).must(t, http.StatusOK)
		if got, _ := p.find(`#compose-` + msg + ` select[name="kind"] option[selected]`).Attr("value"); got != "note" {
			t.Errorf("the reply form under a message preselects %q, want note", got)
		}
		if got, _ := p.find(`#compose select[name="kind"] option[selected]`).Attr("value"); got != "note" {
			t.Errorf("the thread's form preselects %q, want note", got)
		}
		if got, _ := p.find(`#compose textarea[name="body"]`).Attr("maxlength"); got != "500" {
			t.Errorf("the message box's maxlength is %q, want the body limit 500", got)
		}

		b.post("/threads/"+thread+"/mark", url.Values{"state": {"closed"}}).redirectsTo(t, "/threads/"+thread)
		p = b.get("/threads/"+thread).must(t, http.StatusOK)
		if n := p.find(`.reply-link`).Length(); n != 0 {
			t.Errorf("a confirmed closed thread offers %d Reply links", n)
		}
		opts := p.find(`#compose select[name="kind"] option`)
		if v, _ := opts.Attr("value"); opts.Length() != 1 || v != "reopen" {
			t.Errorf("a confirmed closed thread's form offers %d kinds (first %q), want reopen alone", opts.Length(), v)
		}
		b.post("/threads/"+thread+"/messages", url.Values{"kind": {"reopen"}, "body": {"Reopened by a human."}}).must(t, http.StatusSeeOther)
		if got, _ := b.get("/threads/" + thread).find(`[data-state]`).Attr("data-state"); got != "open" {
			t.Errorf("after reopen from the form the thread is %q", got)
		}
	})
}
