package browser

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
)

// forum is a running Parley with its first human account, made through the setup page, and
// three agents with tokens from parley token create: two models that may write, and a
// moderator with the lock right and the label "Mod".
type forum struct {
	*forumServer
	browser          context.Context
	alice, bob, mod  agent
	admin, adminPass string
	session          []*network.Cookie // the administrator's, once signIn has signed in
	screenshots      bool              // whether testMainPages takes screenshots (on one database)
}

const (
	adminName     = "ada"
	adminPassword = "a long password for ada"
	modLabel      = "Mod"
)

func newForum(t *testing.T, browser context.Context, dbURL string, screenshots bool) *forum {
	t.Helper()
	srv := startServer(t, dbURL)
	f := &forum{forumServer: srv, browser: browser, admin: adminName, adminPass: adminPassword, screenshots: screenshots}
	f.setUpFirstAccount(t)
	f.alice = agent{base: srv.base, token: srv.agentToken(t, "alice", "read,write")}
	f.bob = agent{base: srv.base, token: srv.agentToken(t, "bob", "read,write")}
	f.mod = agent{base: srv.base, token: srv.agentToken(t, "mod", "read,write,lock", "--label", modLabel)}
	return f
}

// setUpFirstAccount opens the setup address parley serve printed, creates the administrator
// there and checks that the form signed them in, and that the address is gone afterwards.
func (f *forum) setUpFirstAccount(t *testing.T) {
	t.Helper()
	tb := newTab(t, f.browser, tabOptions{})
	if status := tb.status(f.base + "/setup?code=not-the-code"); status != http.StatusNotFound {
		t.Errorf("the setup address with a wrong code answers %d, want 404", status)
	}
	tb.open(f.setupURL)
	checkAccessibility(t, tb, "/setup")
	if f.screenshots {
		tb.screenshot("setup-en-wide")
	}
	tb.do(
		chromedp.SendKeys(chromedp.CSS(`input[name="name"]`), f.admin),
		chromedp.SendKeys(chromedp.CSS(`input[name="password"]`), f.adminPass),
		chromedp.SendKeys(chromedp.CSS(`input[name="password2"]`), f.adminPass),
		chromedp.Click(chromedp.CSS(`form:has(input[name="password"]) button[type="submit"]`)),
		// Signed in: the page offers POST /logout.
		chromedp.WaitReady(chromedp.CSS(`form[action="/logout"]`)),
	)
	if f.screenshots {
		tb.screenshot("welcome-en-wide")
	}
	if who := tb.text("header"); !strings.Contains(who, "human:"+f.admin) {
		t.Errorf("after the setup the page header reads %q, not the new account human:%s", who, f.admin)
	}
	if status := tb.status(f.setupURL); status != http.StatusNotFound {
		t.Errorf("the setup address after the first account answers %d, want 404", status)
	}
}

// signIn opens a fresh browser context signed in as the administrator. The first time it
// signs in through the login form; later tabs get a copy of that session's cookies, since
// checking a password (argon2id, under the race detector) costs a second or two each time.
func (f *forum) signIn(t *testing.T, opts tabOptions) *tab {
	t.Helper()
	tb := newTab(t, f.browser, opts)
	if f.session != nil {
		tb.setCookies(f.session)
		return tb
	}
	tb.open(f.base + "/login")
	tb.do(
		chromedp.SendKeys(chromedp.CSS(`input[name="name"]`), f.admin),
		chromedp.SendKeys(chromedp.CSS(`input[name="password"]`), f.adminPass),
		chromedp.Click(chromedp.CSS(`form:has(input[name="password"]) button[type="submit"]`)),
		chromedp.WaitReady(chromedp.CSS(`form[action="/logout"]`)),
	)
	f.session = tb.cookies()
	return tb
}
