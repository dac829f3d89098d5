package web_test

import (
	"context"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strings"
	"testing"

	"github.com/parleyforum/parley/storage"
	"github.com/parleyforum/parley/storage/storagetest"
	"github.com/parleyforum/parley/web"
	"github.com/parleyforum/parley/web/password"
)

// copied is another browser holding a copy of b's cookies: a stolen cookie.
func (b *browser) copied(t *testing.T) *browser {
	t.Helper()
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	u, _ := url.Parse(b.f.base)
	jar.SetCookies(u, b.client.Jar.Cookies(u))
	c := b.f.browser(t)
	c.client.Jar = jar
	c.csrf = b.csrf
	return c
}

// sessionCount is how many sessions the human called name has.
func sessionCount(t *testing.T, db *storage.DB, name string) int {
	t.Helper()
	u, err := db.UserByName(context.Background(), name)
	if err != nil {
		t.Fatal(err)
	}
	list, err := db.Sessions(context.Background(), u.ID)
	if err != nil {
		t.Fatal(err)
	}
	return len(list)
}

// A session ends in the database: after each way of ending it, a copy of its cookie reads
// nothing and changes nothing, and the human's other browsers are ended or not as the way
// says.
func TestEndedSessionsSignNobodyIn(t *testing.T) {
	const newPassword = "a brand new password"
	for _, tc := range []struct {
		name string
		// end ends ada's session of the victim browser; other is another browser of ada's,
		// carl another administrator's.
		end func(t *testing.T, f *forum, victim, other, carl *browser)
		// victimLives: the victim browser itself is still signed in (it changed the password).
		victimLives, otherLives bool
	}{
		{"logout", func(t *testing.T, f *forum, victim, _, _ *browser) {
			victim.get("/")
			victim.post("/logout", nil).redirectsTo(t, "/login")
		}, false, true},
		{"password change", func(t *testing.T, f *forum, victim, _, _ *browser) {
			victim.get("/account")
			victim.post("/account/password", url.Values{"current": {thePassword}, "password": {newPassword}, "password2": {newPassword}}).
				redirectsTo(t, "/account?done=password")
			u, _ := f.db.UserByName(context.Background(), "ada")
			if ok, _ := password.Verify(u.PasswordHash, newPassword); !ok {
				t.Error("the new password is not stored")
			}
		}, true, false},
		{"sign out everywhere", func(t *testing.T, f *forum, _, other, _ *browser) {
			other.get("/account")
			other.post("/account/signout-everywhere", nil).redirectsTo(t, "/login")
		}, false, false},
		{"ending one named session", func(t *testing.T, f *forum, _, other, _ *browser) {
			res := other.get("/account").must(t, http.StatusOK)
			id, ok := res.find(`[data-session-id][data-current="false"]`).Attr("data-session-id")
			if !ok || res.find(`[data-session-id]`).Length() != 2 {
				t.Fatalf("the account page does not list ada's two sessions:\n%s", res.body)
			}
			other.post("/account/sessions/"+id+"/end", nil).redirectsTo(t, "/account")
		}, false, true},
		{"an administrator", func(t *testing.T, f *forum, _, _, carl *browser) {
			carl.get("/tokens")
			carl.post("/users/ada/signout", nil).redirectsTo(t, "/tokens")
		}, false, false},
		{"parley user signout", func(t *testing.T, f *forum, _, _, _ *browser) {
			u, _ := f.db.UserByName(context.Background(), "ada")
			if n, err := f.db.EndSessions(context.Background(), u.ID); err != nil || n != 2 {
				t.Fatalf("EndSessions = %d, %v; want ada's 2 sessions", n, err)
			}
		}, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			storagetest.Each(t, func(t *testing.T, db *storage.DB) {
				f := newSite(t, db, web.Options{})
				f.account("ada", true)
				f.account("carl", true)
				victim, other, carl := f.signedIn(t, "ada"), f.signedIn(t, "ada"), f.signedIn(t, "carl")
				victim.get("/tokens").must(t, http.StatusOK)
				thief := victim.copied(t)
				thief.get("/tokens").must(t, http.StatusOK) // the copy works while the session lasts

				tc.end(t, f, victim, other, carl)

				thief.get("/tokens").redirectsTo(t, "/login?next=%2Ftokens")
				thief.get("/account").redirectsTo(t, "/login?next=%2Faccount")
				before, _ := db.Tokens(context.Background())
				if res := thief.post("/tokens", url.Values{"handle": {"stolen"}, "rights": {"read"}}); res.status != http.StatusSeeOther ||
					!strings.HasPrefix(res.header.Get("Location"), "/login") {
					t.Errorf("a copied cookie of an ended session creates tokens: %d %s", res.status, res.header.Get("Location"))
				}
				if after, _ := db.Tokens(context.Background()); len(after) != len(before) {
					t.Errorf("a copied cookie of an ended session made a token: %d tokens, were %d", len(after), len(before))
				}
				if got := thief.get("/").text(".who"); got != "" {
					t.Errorf("a copied cookie of an ended session reads as %q", got)
				}
				for _, b := range []struct {
					name  string
					b     *browser
					lives bool
				}{{"the victim browser", victim, tc.victimLives}, {"ada's other browser", other, tc.otherLives}} {
					status := b.b.get("/account").status
					if lives := status == http.StatusOK; lives != b.lives {
						t.Errorf("%s answers %d on /account; signed in = %v, want %v", b.name, status, lives, b.lives)
					}
				}
				if carl.get("/account").status != http.StatusOK {
					t.Error("ending ada's sessions ended carl's")
				}
			})
		})
	}
}

// The account page: a wrong current password, two different new ones or a short one change
// nothing and say why; a session that is not the human's own is not found.
func TestAccountPageRefusals(t *testing.T) {
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		f := newSite(t, db, web.Options{})
		f.account("ada", false)
		f.account("bea", false)
		ada, bea := f.signedIn(t, "ada"), f.signedIn(t, "bea")
		page := ada.get("/account?lang=de").must(t, http.StatusOK)
		if page.find(`form[action="/account/password"] input[name="current"]`).Length() != 1 ||
			page.find(`[data-action="signout-everywhere"]`).Length() != 1 ||
			page.find(`[data-session-id][data-current="true"] [data-action="session-end"]`).Length() != 1 {
			t.Fatalf("the account page lacks its forms:\n%s", page.body)
		}
		if h := page.text("h1"); h != "Ihr Konto" {
			t.Errorf("the German account page is headed %q", h)
		}
		ada.get("/account?lang=en")
		hash := func() string { u, _ := db.UserByName(context.Background(), "ada"); return u.PasswordHash }
		was := hash()
		for _, tc := range []struct {
			form url.Values
			text string
		}{
			{url.Values{"current": {"wrong password"}, "password": {"new password 1"}, "password2": {"new password 1"}}, "current password is wrong"},
			{url.Values{"current": {thePassword}, "password": {"new password 1"}, "password2": {"new password 2"}}, "differ"},
			{url.Values{"current": {thePassword}, "password": {"short"}, "password2": {"short"}}, "at least 8"},
		} {
			res := ada.post("/account/password", tc.form).must(t, http.StatusBadRequest)
			if !strings.Contains(res.text(".refusal"), tc.text) {
				t.Errorf("password change %v reads %q, want %q", tc.form, res.text(".refusal"), tc.text)
			}
		}
		if hash() != was {
			t.Error("a refused password change changed the password")
		}
		beaPage := bea.get("/account").must(t, http.StatusOK)
		beaID, _ := beaPage.find(`[data-session-id]`).Attr("data-session-id")
		ada.post("/account/sessions/"+beaID+"/end", nil).must(t, http.StatusNotFound)
		ada.post("/account/sessions/nine/end", nil).must(t, http.StatusNotFound)
		if bea.get("/account").status != http.StatusOK {
			t.Error("ada ended bea's session by its number")
		}
		ada.post("/users/bea/signout", nil).must(t, http.StatusForbidden)
		if sessionCount(t, db, "bea") != 1 {
			t.Error("a human who is no administrator ended another's sessions")
		}
	})
}
