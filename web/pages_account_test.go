package web_test

import (
	"context"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"testing"

	"github.com/parleyforum/parley/storage"
	"github.com/parleyforum/parley/storage/storagetest"
	"github.com/parleyforum/parley/web"
)

// The setup address makes the first account, an administrator, signs it in, and is gone.
func TestSetupCreatesTheFirstAdministrator(t *testing.T) {
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		ctx := context.Background()
		if err := db.SetSetting(ctx, storage.SettingSetupCode, "the-code"); err != nil {
			t.Fatal(err)
		}
		f := newSite(t, db, web.Options{})
		b := f.browser(t)
		if hint := b.get("/login").must(t, http.StatusOK).text(".panel"); !strings.Contains(hint, "setup address") {
			t.Errorf("before the first account the login page does not point to the setup address: %q", hint)
		}
		form := b.get("/setup?code=the-code").must(t, http.StatusOK)
		if form.find(`form[action="/setup"] input[name="name"]`).Length() != 1 {
			t.Fatalf("no setup form:\n%s", form.body)
		}
		if header := form.find("header.site-header"); header.Find("nav, a[href]:not([hreflang])").Length() != 0 ||
			header.Find("a[hreflang]").Length() != 1 {
			t.Errorf("the setup page's header offers more than the language switch while no account exists:\n%s", header.Text())
		}
		for _, tc := range []struct {
			values url.Values
			status int
			text   string
		}{
			{url.Values{"name": {"Ada"}, "password": {thePassword}, "password2": {thePassword}}, http.StatusBadRequest, "not valid"},
			{url.Values{"name": {"ada"}, "password": {thePassword}, "password2": {"other"}}, http.StatusBadRequest, "differ"},
			{url.Values{"name": {"ada"}, "password": {"short"}, "password2": {"short"}}, http.StatusBadRequest, "at least 8"},
			{url.Values{"name": {"ada"}, "password": {thePassword}, "password2": {thePassword}, "code": {"wrong"}}, http.StatusNotFound, ""},
		} {
			if tc.values.Get("code") == "" {
				tc.values.Set("code", "the-code")
			}
			res := b.post("/setup", tc.values).must(t, tc.status)
			if !strings.Contains(res.text(".refusal"), tc.text) {
				t.Errorf("setup with %v reads %q, want %q", tc.values, res.text(".refusal"), tc.text)
			}
		}
		if n, _ := db.CountUsers(ctx); n != 0 {
			t.Fatalf("refused setup forms made %d accounts", n)
		}
		b.post("/setup", url.Values{"code": {"the-code"}, "name": {"ada"}, "password": {thePassword}, "password2": {thePassword}}).
			redirectsTo(t, "/")
		u, err := db.UserByName(ctx, "ada")
		if err != nil || !u.Admin {
			t.Fatalf("the first account: %+v, %v; want an administrator", u, err)
		}
		home := b.get("/").must(t, http.StatusOK)
		if got := home.text(".who"); got != "human:ada" {
			t.Errorf("after setup the header names %q, want human:ada signed in", got)
		}
		if home.find(`.panel a[href="/tokens"]`).Length() != 1 {
			t.Errorf("the empty forum does not lead its administrator to the tokens:\n%s", home.body)
		}
		if strings.Contains(b.get("/login").text("main"), "setup address") {
			t.Error("the login page still points to the setup address after the first account")
		}
		b.get("/setup?code=the-code").must(t, http.StatusNotFound)
		b.post("/setup", url.Values{"code": {"the-code"}, "name": {"eve"}, "password": {thePassword}, "password2": {thePassword}}).
			must(t, http.StatusNotFound)
		if n, _ := db.CountUsers(ctx); n != 1 {
			t.Errorf("%d accounts after a second setup form, want 1", n)
		}
	})
}

// Login: the hooks of OPERATOR.md, the same answer for a wrong name and a wrong password, a
// new session (and CSRF token) at login, logout that ends it, and the way back to the page
// that asked for a login.
func TestLoginAndLogout(t *testing.T) {
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		f := newSite(t, db, web.Options{})
		f.account("ada", false)
		b := f.browser(t)
		first := b.get("/threads/th_1?x=1")
		first.redirectsTo(t, "/login?next=%2Fthreads%2Fth_1%3Fx%3D1")
		if c := first.header.Get("Set-Cookie"); !strings.Contains(c, "HttpOnly") || !strings.Contains(c, "SameSite=Lax") {
			t.Errorf("the session cookie is %q, want HttpOnly and SameSite=Lax", c)
		}
		login := b.get("/login?next=%2Fthreads%2Fth_1").must(t, http.StatusOK)
		if login.find(`form[method="post"][action="/login"] input[name="name"]`).Length() != 1 ||
			login.find(`form input[name="password"][type="password"]`).Length() != 1 ||
			login.find(`form[action="/login"] button[type="submit"]`).Length() != 1 {
			t.Fatalf("the login form lacks its hooks:\n%s", login.body)
		}
		before := b.csrf

		wrongName := b.post("/login", url.Values{"name": {"nobody"}, "password": {thePassword}}).must(t, http.StatusUnauthorized)
		wrongPassword := b.post("/login", url.Values{"name": {"ada"}, "password": {"not it at all"}}).must(t, http.StatusUnauthorized)
		if wrongName.text(".refusal") != wrongPassword.text(".refusal") || wrongName.text(".refusal") == "" {
			t.Errorf("a wrong name reads %q, a wrong password %q: want the same", wrongName.text(".refusal"), wrongPassword.text(".refusal"))
		}
		if got := wrongPassword.find(`input[name="name"]`).AttrOr("value", ""); got != "ada" {
			t.Errorf("the name is not kept after a failed login: %q", got)
		}

		b.post("/login", url.Values{"name": {"ada"}, "password": {thePassword}, "next": {"/threads/th_1"}}).redirectsTo(t, "/threads/th_1")
		home := b.get("/").must(t, http.StatusOK)
		if b.csrf == before {
			t.Error("the CSRF token is the same before and after the login: the session was not renewed")
		}
		if home.text(".who") != "human:ada" || home.find(`form[action="/logout"]`).Length() != 1 {
			t.Fatalf("signed in, the header reads %q", home.text(".who"))
		}
		// An address elsewhere is never where a login leads.
		for _, next := range []string{"https://evil.example/", "//evil.example/x", "/\\evil.example"} {
			b.get("/login?next="+url.QueryEscape(next)).redirectsTo(t, "/")
		}
		b.post("/logout", nil).redirectsTo(t, "/login")
		b.get("/").redirectsTo(t, "/login?next=%2F")
	})
}

// Failed logins are limited per account and client: past the limit even the right password
// from that client is refused, with its own message.
func TestFailedLoginsAreLimited(t *testing.T) {
	db := storagetest.Open(t, storage.SQLite)
	f := newSite(t, db, web.Options{})
	f.account("ada", false)
	b := f.browser(t)
	b.get("/login")
	for i := 0; i < 10; i++ {
		b.post("/login", url.Values{"name": {"ada"}, "password": {"wrong password"}}).must(t, http.StatusUnauthorized)
	}
	res := b.post("/login", url.Values{"name": {"ada"}, "password": {thePassword}}).must(t, http.StatusTooManyRequests)
	if !strings.Contains(res.text(".refusal"), "Too many") {
		t.Errorf("the blocked login reads %q", res.text(".refusal"))
	}
	// Another account from the same client is not blocked yet.
	f.account("bea", false)
	b.post("/login", url.Values{"name": {"bea"}, "password": {thePassword}}).redirectsTo(t, "/")
}

// Every POST needs the session's CSRF token, as a form field or the X-CSRF-Token header;
// without it nothing changes.
func TestCSRFOnEveryPost(t *testing.T) {
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		f := newSite(t, db, web.Options{})
		f.account("ada", true)
		thread, _ := f.ask(f.alice, "Is this thread safe from forged forms?")
		f.send(f.bob, `{"kind":"answer","thread":"`+thread+`","body":"Yes."}`)
		b := f.signedIn(t, "ada")
		b.get("/threads/" + thread)
		posts := []struct {
			target string
			form   url.Values
		}{
			{"/threads/" + thread + "/confirm", url.Values{}},
			{"/threads/" + thread + "/mark", url.Values{"state": {"closed"}}},
			{"/threads/" + thread + "/messages", url.Values{"kind": {"close"}, "body": {"forged"}}},
			{"/tokens", url.Values{"handle": {"forged"}, "rights": {"read"}}},
			{"/tokens/1/revoke", url.Values{"confirm": {"yes"}}},
			{"/claims/cl_1/confirm", url.Values{"view": {"proposal"}}},
			{"/moderation/confirm", url.Values{"item": {thread}}},
			{"/logout", url.Values{}},
			{"/login", url.Values{"name": {"ada"}, "password": {thePassword}}},
		}
		for _, p := range posts {
			for _, token := range []string{"", "not-the-token"} {
				p.form.Set("csrf", token)
				res := b.post(p.target, p.form).must(t, http.StatusForbidden)
				if !strings.Contains(res.body, "expired") {
					t.Errorf("POST %s with csrf %q: the page does not say why:\n%s", p.target, token, res.body)
				}
			}
		}
		read := f.must(f.get("/v1/threads/"+thread, f.alice), http.StatusOK)
		if read.at("thread", "state") != "answered" || read.at("thread", "state_confirmed_at") != "" ||
			len(read.json["messages"].([]any)[0].(map[string]any)["replies"].([]any)) != 1 {
			t.Errorf("refused posts changed the thread: %s", read.body)
		}
		if tokens, _ := db.Tokens(context.Background()); len(tokens) != 5 {
			t.Errorf("%d tokens after refused posts, want the 5 of the test", len(tokens))
		}
		if b.get("/").text(".who") != "human:ada" {
			t.Error("a refused logout signed the human out")
		}
		// The header works as well as the field (htmx may send either).
		b.post("/threads/"+thread+"/confirm", url.Values{"csrf": {""}}, "X-CSRF-Token", b.csrf).redirectsTo(t, "/threads/"+thread)
	})
}

// Every page carries the security headers; the policy allows no inline script or eval.
func TestSecurityHeaders(t *testing.T) {
	db := storagetest.Open(t, storage.SQLite)
	f := newSite(t, db, web.Options{})
	f.account("ada", true)
	thread, _ := f.ask(f.alice, "Headers?")
	b := f.signedIn(t, "ada")
	for _, target := range []string{"/login", "/", "/threads/" + thread, "/threads/th_999", "/moderation", "/tokens"} {
		res := b.get(target)
		h := res.header
		csp := h.Get("Content-Security-Policy")
		for _, want := range []string{"script-src 'self'", "frame-ancestors 'none'", "default-src 'none'", "base-uri 'none'"} {
			if !strings.Contains(csp, want) {
				t.Errorf("%s: CSP %q lacks %q", target, csp, want)
			}
		}
		if strings.Contains(csp, "unsafe-inline") || strings.Contains(csp, "unsafe-eval") {
			t.Errorf("%s: CSP %q allows inline script or eval", target, csp)
		}
		for name, want := range map[string]string{
			"X-Content-Type-Options": "nosniff", "Referrer-Policy": "same-origin", "X-Frame-Options": "DENY",
		} {
			if h.Get(name) != want {
				t.Errorf("%s: %s = %q, want %q", target, name, h.Get(name), want)
			}
		}
		if !strings.Contains(h.Get("Vary"), "HX-Request") {
			t.Errorf("%s: Vary = %q, want HX-Request in it", target, h.Get("Vary"))
		}
		if res.find("script:not([src])").Length() != 0 || res.find("[style]").Length() != 0 {
			t.Errorf("%s: an inline script or style, which the CSP blocks", target)
		}
	}
}

// By default only humans who signed in read; public_read opens reading to everyone, never
// acting. Administration is for administrators.
func TestWhoMayReadAndAct(t *testing.T) {
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		closed := newSite(t, db, web.Options{})
		thread, _ := closed.ask(closed.alice, "Who reads this?")
		anon := closed.browser(t)
		for _, target := range []string{"/", "/threads/" + thread, "/moderation", "/tokens"} {
			anon.get(target).redirectsTo(t, "/login?next="+url.QueryEscape(target))
		}

		open := newSite(t, db, web.Options{PublicRead: true})
		anon = open.browser(t)
		anon.get("/").must(t, http.StatusOK)
		page := anon.get("/threads/"+thread).must(t, http.StatusOK)
		if page.find(`[data-action]`).Length() != 0 {
			t.Errorf("a reader who is not signed in sees controls that act: %d", page.find(`[data-action]`).Length())
		}
		anon.get("/moderation").must(t, http.StatusOK)
		anon.get("/tokens").redirectsTo(t, "/login?next=%2Ftokens")
		anon.get("/login") // the session's CSRF token: acting is refused for want of a login, not of a token
		anon.post("/threads/"+thread+"/messages", url.Values{"kind": {"note"}, "body": {"hello"}}).redirectsTo(t, "/login?next=%2F")
		anon.post("/threads/"+thread+"/confirm", nil).redirectsTo(t, "/login?next=%2F")
		if read := open.must(open.get("/v1/threads/"+thread, open.alice), http.StatusOK); strings.Contains(string(read.body), "hello") {
			t.Error("a reader who is not signed in wrote a message")
		}

		open.account("bea", false)
		bea := open.signedIn(t, "bea")
		res := bea.get("/tokens").must(t, http.StatusForbidden)
		if !strings.Contains(res.body, "administrators") {
			t.Errorf("the refusal of /tokens does not say why:\n%s", res.body)
		}
		bea.post("/tokens", url.Values{"handle": {"x"}, "rights": {"read"}}).must(t, http.StatusForbidden)
		if bea.get("/").find(`a[href="/tokens"]`).Length() != 0 {
			t.Error("the navigation links /tokens for a human who is no administrator")
		}
	})
}

// The session cookie is signed and encrypted with keys derived from the session key: a
// server with the same key (a restart, a second instance) knows the session, one with
// another key does not, and a cookie changed by the client is no session at all.
func TestSessionKey(t *testing.T) {
	db := storagetest.Open(t, storage.SQLite)
	key := strings.Repeat("k", 32)
	first := newSite(t, db, web.Options{SessionKey: key})
	first.account("ada", false)
	b := first.signedIn(t, "ada")
	base, _ := url.Parse(first.base)
	cookies := b.client.Jar.Cookies(base)
	if len(cookies) != 1 {
		t.Fatalf("%d cookies after login, want the session alone", len(cookies))
	}
	cookie := cookies[0].Name + "=" + cookies[0].Value
	if strings.Contains(cookie, "ada") {
		t.Error("the name stands readable in the cookie: it is not encrypted")
	}
	for _, tc := range []struct {
		name   string
		key    string
		cookie string
		who    string
	}{
		{"the same key", key, cookie, "human:ada"},
		{"another key", strings.Repeat("x", 32), cookie, ""},
		{"a changed cookie", key, cookie[:len(cookie)-4] + "AAAA", ""},
	} {
		other := newSite(t, db, web.Options{SessionKey: tc.key})
		res := other.browser(t).get("/login", "Cookie", tc.cookie)
		if res.status == http.StatusSeeOther {
			res = other.browser(t).get("/", "Cookie", tc.cookie)
		}
		if got := res.text(".who"); got != tc.who {
			t.Errorf("%s: the page knows %q, want %q", tc.name, got, tc.who)
		}
	}
}

// Behind TLS the session cookie is Secure; over plain HTTP (loopback, tests) it cannot be.
func TestSecureCookieBehindTLS(t *testing.T) {
	db := storagetest.Open(t, storage.SQLite)
	// The test's requests come from loopback: as a proxy there, trusted or not.
	loopback := []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("::1/128"), netip.MustParsePrefix("0.0.0.0/32")}
	trusted := newSite(t, db, web.Options{TrustedProxies: loopback})
	untrusted := newSite(t, db, web.Options{})
	plain := trusted.browser(t).get("/login").header.Get("Set-Cookie")
	tls := trusted.browser(t).get("/login", "X-Forwarded-Proto", "https").header.Get("Set-Cookie")
	forged := untrusted.browser(t).get("/login", "X-Forwarded-Proto", "https").header.Get("Set-Cookie")
	if strings.Contains(plain, "Secure") || !strings.Contains(tls, "Secure") {
		t.Errorf("cookie over http %q, behind TLS %q: want Secure only behind TLS", plain, tls)
	}
	if strings.Contains(forged, "Secure") {
		t.Errorf("cookie %q: X-Forwarded-Proto from a proxy nobody trusts made it Secure", forged)
	}
}
