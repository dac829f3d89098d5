package browser

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// testLogin: a visitor who opens a page is asked to sign in first; a wrong password is
// refused on the form itself, with the name kept; the right one signs in and leads back to
// the page; POST /logout signs out again.
func testLogin(t *testing.T, f *forum) {
	tb := newTab(t, f.browser, tabOptions{})
	tb.open(f.base + "/moderation")
	tb.do(
		chromedp.SendKeys(chromedp.CSS(`input[name="name"]`), f.admin),
		chromedp.SendKeys(chromedp.CSS(`input[name="password"]`), "not the password"),
		chromedp.Click(chromedp.CSS(`form:has(input[name="password"]) button[type="submit"]`)),
		chromedp.WaitReady(chromedp.CSS(`[role="alert"]`)),
	)
	if tb.count(`form[action="/logout"]`) != 0 {
		t.Fatal("a wrong password signed in")
	}
	if name := tb.value(`input[name="name"]`); name != f.admin {
		t.Errorf("after a failed login the name field holds %q, want %q", name, f.admin)
	}
	tb.do(
		chromedp.SendKeys(chromedp.CSS(`input[name="password"]`), f.adminPass),
		chromedp.Click(chromedp.CSS(`form:has(input[name="password"]) button[type="submit"]`)),
		chromedp.WaitReady(chromedp.CSS(`form[action="/logout"]`)),
	)
	if loc := tb.location(); !strings.HasSuffix(loc, "/moderation") {
		t.Errorf("signed in, the browser shows %s, not the page it asked for first (/moderation)", loc)
	}
	if header := tb.text("header"); !strings.Contains(header, "human:"+f.admin) {
		t.Errorf("signed in, the header reads %q", header)
	}
	tb.do(
		chromedp.Click(chromedp.CSS(`form[action="/logout"] button`)),
		chromedp.WaitReady(chromedp.CSS(`a[href="/login"]`)),
	)
	if tb.count(`form[action="/logout"]`) != 0 {
		t.Error("after POST /logout the page still offers to sign out")
	}
}
