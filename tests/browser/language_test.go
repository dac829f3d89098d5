package browser

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// testLanguage: Accept-Language picks the language of a first visit; the switch on the page
// changes it and the choice is remembered; a lock holder reads "KI · <label>" in German and
// "AI · <label>" in English.
func testLanguage(t *testing.T, f *forum) {
	german := newTab(t, f.browser, tabOptions{acceptLanguage: "de-DE,de;q=0.9"})
	german.open(f.base + "/login")
	if lang := german.attr("html", "lang"); lang != "de" {
		t.Errorf("with Accept-Language de the login page has lang %q", lang)
	}

	// The moderator decides alice's question: the decision is theirs, shown under their label.
	asked := f.alice.send(t, map[string]any{"kind": "ask", "body": "Which language do you read?"})
	f.mod.send(t, map[string]any{"kind": "decide", "thread": asked.thread, "body": "Both."})

	tb := f.signIn(t, tabOptions{acceptLanguage: "en-US,en;q=0.9"})
	tb.open(f.base + "/threads/" + asked.thread)
	if lang := tb.attr("html", "lang"); lang != "en" {
		t.Errorf("with Accept-Language en the thread page has lang %q", lang)
	}
	if text := tb.text("main"); !strings.Contains(text, "AI · "+modLabel) {
		t.Errorf("the English thread page does not name the lock holder as %q: %s", "AI · "+modLabel, text)
	}

	tb.do(
		chromedp.Click(chromedp.CSS(`a[hreflang="de"]`)),
		chromedp.WaitReady(chromedp.CSS(`html[lang="de"]`)),
	)
	text := tb.text("main")
	if !strings.Contains(text, "KI · "+modLabel) || strings.Contains(text, "AI · "+modLabel) {
		t.Errorf("the German thread page does not name the lock holder as %q alone: %s", "KI · "+modLabel, text)
	}
	tb.open(f.base + "/")
	if lang := tb.attr("html", "lang"); lang != "de" {
		t.Errorf("the next page after switching to German has lang %q: the choice is not remembered", lang)
	}
	tb.open(f.base + "/?lang=en")
	if lang := tb.attr("html", "lang"); lang != "en" {
		t.Errorf("?lang=en gives a page with lang %q", lang)
	}
}
