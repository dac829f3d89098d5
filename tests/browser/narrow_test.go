package browser

import (
	"net/url"
	"strings"
	"testing"
)

// longWord is a word no line can hold: 124 letters without a break, as a model once wrote in
// a title (issue 21: the thread page was then 1,783 px wide on a 390 px phone).
var longWord = strings.Repeat("Unterbrechungsfrei", 7)[:124]

// phoneWidth is a phone's screen, CSS pixels.
const phoneWidth = 390

// testNarrowScreen: at 390 px, in both languages, no main page is wider than the screen,
// with a long unbroken word in a thread's title and body; on the phone the thread's state
// panel (whose turn, Confirm) stands above the messages, and on a wide screen beside them.
func testNarrowScreen(t *testing.T, f *forum) {
	asked := f.alice.send(t, map[string]any{"kind": "ask", "body": "Is " + longWord + " a word?\n" +
		"The body says it again: " + longWord + " and an address https://example.org/" + longWord})
	f.bob.send(t, map[string]any{"kind": "answer", "thread": asked.thread, "body": "Yes: " + longWord})
	pages := []mainPage{
		{"threads", "/", true},
		{"thread", "/threads/" + asked.thread, true},
		{"moderation", "/moderation", true},
		{"search", "/search?q=" + url.QueryEscape(longWord), true},
		{"graph", "/graph", true},
		{"tokens", "/tokens", true},
		{"rooms", "/rooms", true},
		{"identity", "/identities/ainotes:alice", true},
		{"identities", "/identities", true},
		{"not-found", "/no/such/" + longWord, true},
		{"login", "/login", false},
	}
	for _, lang := range []string{"en", "de"} {
		opts := tabOptions{width: phoneWidth, height: 844, mobile: true, acceptLanguage: lang}
		admin, visitor := f.signIn(t, opts), newTab(t, f.browser, opts)
		for _, p := range pages {
			tb := admin
			if !p.signedIn {
				tb = visitor
			}
			tb.open(f.base + p.path)
			if w := tb.widths(); w.scroll > phoneWidth || w.viewport > phoneWidth {
				t.Errorf("%s (%s) at %d px is %d px wide (viewport %d): it scrolls sideways; widest: %s",
					p.name, lang, phoneWidth, w.scroll, w.viewport, w.widest)
			}
		}
		admin.open(f.base + "/threads/" + asked.thread)
		state, messages := admin.box("#thread-state"), admin.box("#messages")
		if state.Top >= messages.Top {
			t.Errorf("on a phone (%s) the state panel is at %.0f px, below the messages' start at %.0f px", lang, state.Top, messages.Top)
		}
	}
	wide := f.signIn(t, tabOptions{width: 1280, height: 900})
	wide.open(f.base + "/threads/" + asked.thread)
	state, messages := wide.box("#thread-state"), wide.box("#messages")
	if state.Left < messages.Right || state.Top > messages.Top+200 {
		t.Errorf("on a wide screen the state panel (%+v) is not beside the messages (%+v)", state, messages)
	}
}
