package web_test

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/gofiber/fiber/v2"

	"github.com/parleyforum/parley/static"
	"github.com/parleyforum/parley/storage"
	"github.com/parleyforum/parley/storage/storagetest"
	"github.com/parleyforum/parley/web"
)

// Errors are the forum's own pages, in the reader's language and with the reader signed in,
// naming their status (issue 21). Found: an unknown address answered "Cannot GET /t/th_1" in
// English even with ?lang=de; a method no route takes answered "Method Not Allowed".
func TestErrorsAreTheForumsPages(t *testing.T) {
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		f := newSite(t, db, web.Options{})
		f.account("ada", false)
		b := f.signedIn(t, "ada")
		for _, c := range []struct {
			name, method, target string
			status               int
			title                string
		}{
			{"an unknown address, German asked for", http.MethodGet, "/t/th_1?lang=de", 404, "Nicht gefunden"},
			{"an unknown address, the language remembered", http.MethodGet, "/no/such/page", 404, "Nicht gefunden"},
			{"a method no route takes", http.MethodPut, "/login", 405, "Hier nicht möglich"},
			{"a method no route takes, on a thread", http.MethodDelete, "/threads/th_1", 405, "Hier nicht möglich"},
			{"an administrator's page", http.MethodGet, "/tokens", 403, "Nicht erlaubt"},
			{"back in English", http.MethodGet, "/t/th_1?lang=en", 404, "Not found"},
		} {
			p := b.do(c.method, c.target, nil)
			if p.status != c.status {
				t.Errorf("%s: %s %s = %d, want %d", c.name, c.method, c.target, p.status, c.status)
			}
			if got := p.text("h1"); got != c.title {
				t.Errorf("%s: the page's heading is %q, want %q:\n%s", c.name, got, c.title, p.body)
			}
			if got, _ := p.find(`[data-page="error"]`).Attr("data-status"); got != itoa(c.status) {
				t.Errorf("%s: the error page names status %q, want %d", c.name, got, c.status)
			}
			if !strings.HasPrefix(p.header.Get("Content-Type"), "text/html") || strings.Contains(p.body, "Cannot ") {
				t.Errorf("%s: a bare answer: %v\n%s", c.name, p.header, p.body)
			}
			if p.text(".who") != "human:ada" {
				t.Errorf("%s: the error page does not show the reader signed in: %q", c.name, p.text(".who"))
			}
		}
		// The API and MCP keep their own answers.
		if p := b.get("/v1/nothing"); p.status != 404 || !strings.HasPrefix(p.header.Get("Content-Type"), "application/json") {
			t.Errorf("GET /v1/nothing = %d %s, want the API's JSON refusal", p.status, p.header.Get("Content-Type"))
		}
		if p := b.get("/mcp"); strings.HasPrefix(p.header.Get("Content-Type"), "text/html") {
			t.Errorf("GET /mcp answers a page: %d %s", p.status, p.body)
		}
	})
}

// A fault inside a page handler is the forum's 500 page, the fault itself only in the log.
func TestFaultIsThePageNamingTheStatus(t *testing.T) {
	db := storagetest.Open(t, storage.SQLite)
	log, logged := quiet()
	app := web.New(web.Options{DB: db, Logger: log})
	app.Get("/boom", func(c *fiber.Ctx) error { panic("the secret detail") })
	status, header, body := do(t, app, http.MethodGet, "/boom?lang=de")
	if status != http.StatusInternalServerError || !strings.HasPrefix(header.Get("Content-Type"), "text/html") ||
		!strings.Contains(body, "Etwas ist schiefgegangen") || !strings.Contains(body, "Status 500") {
		t.Errorf("GET /boom = %d %v, want the forum's German 500 page:\n%s", status, header, body)
	}
	if strings.Contains(body, "secret") || !strings.Contains(logged.String(), "the secret detail") {
		t.Errorf("the fault reached the client, or not the log:\n%s\n%s", body, logged)
	}
}

// A setup link followed after setup says the forum is set up already and leads to the
// sign-in. Found: it answered a bare "Not Found".
func TestSetupLinkAfterSetup(t *testing.T) {
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		ctx := context.Background()
		f := newSite(t, db, web.Options{})
		if err := db.SetSetting(ctx, storage.SettingSetupCode, "the-code"); err != nil {
			t.Fatal(err)
		}
		b := f.browser(t)
		p := b.get("/setup?code=wrong&lang=de").must(t, http.StatusNotFound)
		if got := p.text("h1"); got != "Nicht gefunden" {
			t.Errorf("a wrong setup code before setup: heading %q, want the 404 page", got)
		}
		f.account("ada", true)
		for _, target := range []string{"/setup?code=the-code", "/setup?code=wrong", "/setup"} {
			p = b.get(target).must(t, http.StatusNotFound)
			if got := p.text("h1"); got != "Schon eingerichtet" {
				t.Errorf("GET %s after setup: heading %q, want Schon eingerichtet", target, got)
			}
			if href, _ := p.find(`a[data-error-link]`).Attr("href"); href != "/login" {
				t.Errorf("GET %s after setup links to %q, want /login", target, href)
			}
		}
	})
}

// Every page links the forum's icon, and /favicon.ico leads to it. Found: every page
// logged a 404 for /favicon.ico.
func TestFavicon(t *testing.T) {
	f := newSite(t, storagetest.Open(t, storage.SQLite), web.Options{Static: static.FS(), PublicRead: true})
	for _, target := range []string{"/", "/login", "/no/such/page"} {
		if href, _ := f.browser(t).get(target).find(`link[rel="icon"]`).Attr("href"); href != "/static/favicon.svg" {
			t.Errorf("GET %s links the icon %q", target, href)
		}
	}
	p := f.browser(t).get("/favicon.ico")
	if p.status != http.StatusMovedPermanently || p.header.Get("Location") != "/static/favicon.svg" {
		t.Errorf("GET /favicon.ico = %d to %q", p.status, p.header.Get("Location"))
	}
	p = f.browser(t).get("/static/favicon.svg")
	if p.status != http.StatusOK || !strings.HasPrefix(p.header.Get("Content-Type"), "image/svg+xml") {
		t.Errorf("GET /static/favicon.svg = %d %s", p.status, p.header.Get("Content-Type"))
	}
}

func itoa(n int) string { return strconv.Itoa(n) }
