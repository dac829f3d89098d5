package browser

import (
	"fmt"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

// trackRecordPages are the pages of the track records (PROTOCOL.md § 17): the ranking, a
// profile and the forum's health.
var trackRecordPages = []mainPage{
	{"identities", "/identities", true},
	{"identity", "/identities/ainotes:bob", true},
	{"health", "/health", true},
}

// testTrackRecords: the ranking, a profile and /health in both languages, wide and on a
// phone: axe-core finds nothing serious, and at 390 px nothing scrolls sideways. The period
// choice of /health and its links are reached from the keyboard, and Enter follows them. A
// seal overturned first, so that /health has one to show. On SQLite the run takes their
// screenshots.
func testTrackRecords(t *testing.T, f *forum) {
	asked := f.alice.send(t, map[string]any{"kind": "ask", "body": "Does the feed resume after a restart?"})
	answer := f.bob.send(t, map[string]any{"kind": "answer", "thread": asked.thread,
		"body": "Yes: Last-Event-ID resumes where it stopped."})
	sealed := f.supportedClaim(t, asked.thread, answer.message, "The feed resumes from Last-Event-ID after a restart")
	verify := f.signIn(t, tabOptions{})
	verify.open(f.base + "/threads/" + asked.thread)
	card := fmt.Sprintf(`[data-claim-id=%q]`, sealed)
	verify.do(
		chromedp.Click(chromedp.CSS(card+` [data-action="verify"]`)),
		chromedp.WaitReady(chromedp.CSS(card+`[data-claim-state="verified"]`)),
	)
	f.bob.claim(t, "/v1/claims/"+sealed+"/refute", map[string]any{"body": "Not after a restart: the cursor's key changed.",
		"evidence": []map[string]any{{"kind": "log", "ref": "400 invalid cursor after the restart"}}})

	for _, v := range viewports {
		for _, lang := range []string{"en", "de"} {
			tb := f.signIn(t, tabOptions{width: v.width, height: v.height, mobile: v.mobile, acceptLanguage: lang})
			for _, p := range trackRecordPages {
				where := fmt.Sprintf("%s (%s, %s)", p.path, lang, v.name)
				tb.open(f.base + p.path)
				if v.mobile {
					checkNoSidewaysScroll(t, tb, where)
				}
				checkAccessibility(t, tb, where)
				if f.screenshots {
					tb.screenshot(fmt.Sprintf("%s-%s-%s", p.name, lang, v.name))
				}
			}
			tb.open(f.base + "/health")
			if tb.count(fmt.Sprintf(`[data-claim-id=%q] a[href^="/threads/"]`, sealed)) != 1 {
				t.Errorf("/health (%s, %s) does not link the overturned seal %s", lang, v.name, sealed)
			}
		}
	}

	// From the keyboard: the ranking's link to /health, then each period, then the way back.
	tb := f.signIn(t, tabOptions{})
	tb.open(f.base + "/identities")
	tabTo(t, tb, `a[data-health-link]`)
	tb.do(chromedp.KeyEvent(kb.Enter), chromedp.WaitReady(chromedp.CSS(`[data-page="health"][data-period="week"]`)))
	for _, period := range []string{"day", "all", "week"} {
		tabTo(t, tb, fmt.Sprintf(`a[data-period-choice=%q]`, period))
		tb.do(chromedp.KeyEvent(kb.Enter), chromedp.WaitReady(chromedp.CSS(fmt.Sprintf(`[data-page="health"][data-period=%q]`, period))))
		if got := tb.attr(`[aria-current="page"][data-period-choice]`, "data-period-choice"); got != period {
			t.Errorf("after choosing %s the page marks %s as chosen", period, got)
		}
	}
	tabTo(t, tb, `main a[href="/identities"]`)
	tb.do(chromedp.KeyEvent(kb.Enter), chromedp.WaitReady(chromedp.CSS(`[data-page="identities"]`)))
}

// checkNoSidewaysScroll fails the test when the page is wider than the screen.
func checkNoSidewaysScroll(t *testing.T, tb *tab, where string) {
	t.Helper()
	widths := run(tb, "the page's width", chromedp.Evaluate[[]int](
		`[document.documentElement.scrollWidth, document.documentElement.clientWidth]`))
	if widths[0] > widths[1] {
		t.Errorf("%s scrolls sideways: %d px wide on a screen of %d", where, widths[0], widths[1])
	}
}

// tabTo presses Tab from where the focus is until css has the focus, and fails the test
// when maxTabs presses do not reach it; the focus must show.
func tabTo(t *testing.T, tb *tab, css string) {
	t.Helper()
	focused := func() bool {
		return run(tb, "the focused element", chromedp.Evaluate[bool](
			fmt.Sprintf(`document.activeElement !== null && document.activeElement.matches(%q)`, css)))
	}
	for range maxTabs {
		if focused() {
			break
		}
		tb.do(chromedp.KeyEvent(kb.Tab))
	}
	if !focused() {
		t.Fatalf("%d presses of Tab did not reach %s", maxTabs, css)
	}
	outline := run(tb, "the focus outline", chromedp.Evaluate[string](
		`(s => s.outlineStyle === "none" ? "" : s.outlineStyle)(getComputedStyle(document.activeElement))`))
	if outline == "" {
		t.Errorf("%s has the focus but shows no outline", css)
	}
}
