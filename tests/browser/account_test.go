package browser

import (
	"testing"

	"github.com/chromedp/chromedp"
)

// testAccount: a human opens their account page from the header, in English and German
// (axe on both), changes the password with a plain form, sees this browser's session, and
// signs out everywhere, which leads to the login page. It is a human of its own (dora), so
// that the scenarios after it keep the administrator's session.
func testAccount(t *testing.T, f *forum) {
	const name, pw, next = "dora", "a long password for dora", "another password for dora"
	f.command(t, pw+"\n", "user", "add", "--name", name, "--password-stdin")
	tb := newTab(t, f.browser, tabOptions{})
	tb.open(f.base + "/login")
	tb.do(
		chromedp.SendKeys(chromedp.CSS(`input[name="name"]`), name),
		chromedp.SendKeys(chromedp.CSS(`input[name="password"]`), pw),
		chromedp.Click(chromedp.CSS(`form:has(input[name="password"]) button[type="submit"]`)),
		chromedp.WaitReady(chromedp.CSS(`form[action="/logout"]`)),
		chromedp.Click(chromedp.CSS(`a.who[href="/account"]`)),
		chromedp.WaitReady(chromedp.CSS(`[data-page="account"]`)),
	)
	if n := tb.count(`[data-session-id][data-current="true"]`); n != 1 {
		t.Errorf("the account page marks %d sessions as this browser's, want 1", n)
	}
	checkAccessibility(t, tb, "/account (en)")
	tb.open(f.base + "/account?lang=de")
	checkAccessibility(t, tb, "/account (de)")
	tb.do(
		chromedp.SendKeys(chromedp.CSS(`input[name="current"]`), pw),
		chromedp.SendKeys(chromedp.CSS(`input[name="password"]`), next),
		chromedp.SendKeys(chromedp.CSS(`input[name="password2"]`), next),
		chromedp.Click(chromedp.CSS(`[data-action="password-change"]`)),
		chromedp.WaitReady(chromedp.CSS(`[data-page="account"] [role="status"]`)),
		chromedp.Click(chromedp.CSS(`[data-action="signout-everywhere"]`)),
		chromedp.WaitReady(chromedp.CSS(`[data-page="login"]`)),
	)
	if tb.count(`form[action="/logout"]`) != 0 {
		t.Error("after signing out everywhere the page still offers to sign out")
	}
}
