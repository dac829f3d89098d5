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

// The moderation queue: every unconfirmed proposal, the oldest first, each with its own
// confirm control; confirmed from the queue it leaves it.
func TestModerationQueue(t *testing.T) {
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		f := newSite(t, db, web.Options{})
		f.account("ada", false)
		older := f.proposed("Older proposal")
		f.ask(f.alice, "Nothing proposed here")
		newer := f.proposed("Newer proposal")
		b := f.signedIn(t, "ada")

		q := b.get("/moderation").must(t, http.StatusOK)
		var rows []string
		q.find("[data-thread-id]").Each(func(_ int, s *goquery.Selection) { rows = append(rows, s.AttrOr("data-thread-id", "")) })
		if strings.Join(rows, " ") != older+" "+newer {
			t.Fatalf("queue rows %v, want the proposals oldest first: %s %s", rows, older, newer)
		}
		row := q.find(`[data-thread-id="` + older + `"]`)
		if row.Find(`[data-action="confirm"]`).Length() != 1 || row.Find(`[data-action="mark"]`).Length() != 1 {
			t.Error("a queue row lacks its confirm or mark control")
		}
		if !strings.Contains(row.Text(), "ainotes:bob") || !strings.Contains(row.Text(), "answered") {
			t.Errorf("the row does not say who proposed what: %q", row.Text())
		}
		message := row.Find(".excerpt")
		if got := message.Find("blockquote").Text(); got != "A model's answer." ||
			!strings.Contains(message.Find("figcaption").Text(), "Answer from ainotes:bob") ||
			message.Find(`a[href^="/threads/`+older+`#msg_"]`).Length() != 1 {
			t.Errorf("the row does not show the message that proposed, with its author and a link: %q", message.Text())
		}
		hostile := f.proposedWith("Markup in the queue", "<b>bold</b>\n2\n3\n4\n5th line")
		excerpt := b.get("/moderation").find(`[data-thread-id="` + hostile + `"] .excerpt blockquote`)
		if excerpt.Find("b").Length() != 0 || excerpt.Text() != "<b>bold</b>\n2\n3\n4 …" {
			t.Errorf("the queue's excerpt is not the escaped text of the first four lines: %q", excerpt.Text())
		}

		b.post("/threads/"+older+"/confirm", url.Values{"view": {"queue"}}).redirectsTo(t, "/moderation")
		frag := b.post("/threads/"+newer+"/mark", url.Values{"view": {"queue"}, "state": {"open"}}, htmx...).must(t, http.StatusOK)
		if frag.find(`#queue-`+newer+`[data-thread-id] [data-done]`).Length() != 1 {
			t.Errorf("the htmx answer in the queue is not the row, done:\n%s", frag.body)
		}
		if n := b.get("/moderation").find("[data-thread-id]").Length(); n != 1 {
			t.Errorf("%d rows left in the queue, want the one with markup", n)
		}
		// A refusal in the queue shows beside the row's control.
		again := f.proposed("Refused in the queue")
		b.get("/moderation")
		p := b.post("/threads/"+again+"/mark", url.Values{"view": {"queue"}, "state": {"nonsense"}}).must(t, http.StatusBadRequest)
		if p.find(`#mark-`+again+`-error [data-reason="invalid_body"]`).Length() != 1 {
			t.Errorf("the refused mark is not beside the row's control:\n%s", p.body)
		}
		b.get("/moderation?cursor=forged").must(t, http.StatusNotFound)
	})
}

// Administration: a token made in the page, its secret shown once and working; the list
// without secrets; revoke; the list of humans; a bad form refused and kept.
func TestTokensAdministration(t *testing.T) {
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		f := newSite(t, db, web.Options{})
		f.account("ada", true)
		f.account("bea", false)
		b := f.signedIn(t, "ada")
		page := b.get("/tokens").must(t, http.StatusOK)
		if page.find(`[data-action="token-create"]`).Length() != 1 || page.find("[data-token-id]").Length() != 5 {
			t.Fatalf("the tokens page lacks its create control or the 5 tokens of the test:\n%s", page.body)
		}
		if !strings.Contains(page.text(".users"), "human:bea") || page.find(`[data-user="ada"] .tag`).Length() != 1 {
			t.Errorf("the humans are not listed with the administrator marked: %q", page.text(".users"))
		}

		b.post("/tokens", url.Values{"handle": {"carol"}, "rights": {"read", "write", "lock"}, "label": {"Night shift"}}).redirectsTo(t, "/tokens")
		shown := b.get("/tokens").must(t, http.StatusOK)
		secret := strings.TrimSpace(shown.find("[data-token-secret]").Text())
		id := shown.find("[data-token-secret]").AttrOr("data-token-id", "")
		if !strings.HasPrefix(secret, "parley_") || id == "" {
			t.Fatalf("no secret shown after create:\n%s", shown.body)
		}
		if strings.Count(shown.body, secret) != 1 {
			t.Error("the secret appears more than once on the page")
		}
		if got := shown.text(".secret pre"); !strings.Contains(got, f.base+"/mcp") || !strings.Contains(got, "Bearer $PARLEY_TOKEN") {
			t.Errorf("the page does not say how to connect the agent: %q", got)
		}
		manifest := f.must(f.get("/v1/manifest", secret), http.StatusOK)
		if manifest.at("you", "identity") != "ainotes:carol" || manifest.at("you", "label") != "Night shift" {
			t.Errorf("the new token acts as %q with label %q", manifest.at("you", "identity"), manifest.at("you", "label"))
		}
		if again := b.get("/tokens"); again.find("[data-token-secret]").Length() != 0 || strings.Contains(again.body, secret) {
			t.Error("the secret is shown a second time")
		}
		row := b.get("/tokens").find(`tr[data-token-id="` + id + `"]`)
		if !strings.Contains(row.Text(), "ainotes:carol") || !strings.Contains(row.Text(), "lock") {
			t.Errorf("the new token's row reads %q", row.Text())
		}
		if got := strings.Join(strings.Fields(row.Text()), " "); !strings.Contains(got, "Identity: ainotes:carol") ||
			!strings.Contains(got, "Label: Night shift") || row.Find(`td.status [data-action="token-revoke"]`).Length() != 1 {
			t.Errorf("the token's row does not label its columns for a phone, or lacks its revoke control: %q", got)
		}

		frag := b.post("/tokens", url.Values{"handle": {"dan"}, "rights": {"read"}}, htmx...).must(t, http.StatusOK)
		if frag.find("#tokens [data-token-secret]").Length() != 1 || strings.Contains(frag.body, "<html") {
			t.Errorf("the htmx create does not answer the tokens part with the secret:\n%s", frag.body)
		}

		// A second token for a handle that has one is made in one step, as scripts make them,
		// and its page says plainly that it is one more token of the same identity.
		b.post("/tokens", url.Values{"handle": {"carol"}, "rights": {"read"}}).redirectsTo(t, "/tokens")
		second := b.get("/tokens").must(t, http.StatusOK)
		if note := second.find(".secret [data-same-identity]"); note.AttrOr("data-same-identity", "") != "1" ||
			!strings.Contains(note.Text(), "one more token of ainotes:carol") {
			t.Errorf("a second token of ainotes:carol does not say it is one more of the same identity: %q", second.text(".secret"))
		}
		if shown.find("[data-same-identity]").Length() != 0 || frag.find("[data-same-identity]").Length() != 0 {
			t.Error("the first token of an identity is said to be one more of it")
		}

		// Revoking asks first, on a step that names the token; only its confirm=yes revokes.
		ask := b.post("/tokens/"+id+"/revoke", nil).must(t, http.StatusOK)
		step := ask.find(`[data-revoke-step="` + id + `"]`)
		if step.Length() != 1 || !strings.Contains(step.Text(), "token "+id+" of ainotes:carol") || !strings.Contains(step.Text(), "Night shift") ||
			step.Find(`form input[name="confirm"][value="yes"]`).Length() != 1 || step.Find(`[data-action="token-revoke"]`).Length() != 1 {
			t.Errorf("the revoke does not ask first on a step that names the token:\n%s", step.Text())
		}
		if r := f.get("/v1/threads", secret); r.status != http.StatusOK {
			t.Errorf("asking to revoke revoked the token: %d %s", r.status, r.body)
		}
		if frag := b.post("/tokens/"+id+"/revoke", nil, htmx...).must(t, http.StatusOK); frag.find(`#tokens [data-revoke-step="`+id+`"]`).Length() != 1 {
			t.Errorf("the htmx revoke does not ask first:\n%s", frag.body)
		}
		b.post("/tokens/"+id+"/revoke", url.Values{"confirm": {"yes"}}).redirectsTo(t, "/tokens")
		if r := f.get("/v1/threads", secret); r.reason() != "unauthenticated" {
			t.Errorf("the revoked token still reads: %d %s", r.status, r.body)
		}
		if b.get("/tokens").find(`tr[data-token-id="`+id+`"] [data-action="token-revoke"]`).Length() != 0 {
			t.Error("a revoked token still has its revoke control")
		}
		b.post("/tokens/9999/revoke", nil).must(t, http.StatusNotFound)
		b.post("/tokens/9999/revoke", url.Values{"confirm": {"yes"}}).must(t, http.StatusNotFound)

		for _, tc := range []struct {
			form url.Values
			text string
		}{
			{url.Values{"handle": {"Bad Handle"}, "rights": {"read"}}, "handle is not valid"},
			{url.Values{"handle": {"erin"}}, "at least one right"},
			{url.Values{"handle": {"erin"}, "rights": {"read", "fly"}}, "at least one right"},
			{url.Values{"handle": {"erin"}, "rights": {"read"}, "label": {" padded "}}, "label is not valid"},
		} {
			p := b.post("/tokens", tc.form).must(t, http.StatusBadRequest)
			if !strings.Contains(p.text("#token-create .refusal"), tc.text) {
				t.Errorf("create %v reads %q, want %q", tc.form, p.text("#token-create .refusal"), tc.text)
			}
			if got := p.find(`input[name="handle"]`).AttrOr("value", ""); got != tc.form.Get("handle") {
				t.Errorf("the handle is not kept: %q", got)
			}
		}
		if tokens, _ := db.Tokens(t.Context()); len(tokens) != 8 {
			t.Errorf("%d tokens, want the 5 of the test, carol twice and dan", len(tokens))
		}
	})
}

// Accept-Language decides, ?lang= switches and is remembered in the session; everything a
// person reads follows, the lock label and the relative times included.
func TestLanguages(t *testing.T) {
	db := storagetest.Open(t, storage.SQLite)
	f := newSite(t, db, web.Options{})
	f.account("ada", false)
	thread, _ := f.ask(f.alice, "Sprache?")
	f.send(f.mod, `{"kind":"answer","thread":"`+thread+`","body":"Ja."}`)
	b := f.signedIn(t, "ada")

	de := b.get("/threads/"+thread, "Accept-Language", "de-DE,de;q=0.9,en;q=0.5").must(t, http.StatusOK)
	if de.find(`html[lang="de"]`).Length() != 1 || de.text(".lock-label") != "KI · Moderation" || !strings.Contains(de.text("#thread-state"), "Zustand") {
		t.Errorf("Accept-Language de: lang %q, lock label %q", de.find("html").AttrOr("lang", ""), de.text(".lock-label"))
	}
	if got := strings.Join(strings.Fields(de.text("#thread-state")), " "); !strings.Contains(got, "bestätigt von KI · Moderation") {
		t.Errorf("the state the lock holder set does not name them as its confirmer: %q", got)
	}
	if got := de.find("time").First().Text(); got != "gerade eben" {
		t.Errorf("a German relative time reads %q", got)
	}
	en := b.get("/threads/"+thread+"?lang=en", "Accept-Language", "de").must(t, http.StatusOK)
	if en.find(`html[lang="en"]`).Length() != 1 || en.text(".lock-label") != "AI · Moderation" {
		t.Errorf("?lang=en over Accept-Language de: lang %q, lock label %q", en.find("html").AttrOr("lang", ""), en.text(".lock-label"))
	}
	if got := b.get("/", "Accept-Language", "de").find("html").AttrOr("lang", ""); got != "en" {
		t.Errorf("the choice of ?lang=en is not remembered: the next page is in %q", got)
	}
	if got := f.browser(t).get("/login", "Accept-Language", "fr-FR, de;q=0.8").find("html").AttrOr("lang", ""); got != "de" {
		t.Errorf("fr then de: the login page is in %q, want de", got)
	}
	if got := f.browser(t).get("/login?lang=xx", "Accept-Language", "fr").find("html").AttrOr("lang", ""); got != "en" {
		t.Errorf("an unknown language: the page is in %q, want the default en", got)
	}
}
