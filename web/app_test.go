package web_test

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/PuerkitoBio/goquery"
	"github.com/gofiber/fiber/v2"

	"github.com/parleyforum/parley/storage"
	"github.com/parleyforum/parley/storage/storagetest"
	"github.com/parleyforum/parley/web"
)

func do(t *testing.T, app *fiber.App, method, target string) (int, http.Header, string) {
	t.Helper()
	resp, err := app.Test(httptest.NewRequest(method, target, nil), -1)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, resp.Header, string(body)
}

// quiet is a logger for tests whose failures are expected; what it was told is in logged.
func quiet() (*slog.Logger, *bytes.Buffer) {
	logged := new(bytes.Buffer)
	return slog.New(slog.NewTextHandler(logged, nil)), logged
}

func TestHealthz(t *testing.T) {
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		log, logged := quiet()
		app := web.New(web.Options{DB: db, Logger: log})
		status, header, body := do(t, app, http.MethodGet, "/healthz")
		if status != http.StatusOK || body != `{"status":"ok"}` {
			t.Errorf("GET /healthz = %d %q, want 200 {\"status\":\"ok\"}", status, body)
		}
		if !strings.HasPrefix(header.Get("Content-Type"), "application/json") || header.Get("Cache-Control") != "no-store" {
			t.Errorf("GET /healthz headers = %v", header)
		}

		// A database that does not answer: 503, and the app itself keeps working.
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
		status, _, body = do(t, app, http.MethodGet, "/healthz")
		if status != http.StatusServiceUnavailable || body != `{"status":"unavailable"}` {
			t.Errorf("GET /healthz with the database closed = %d %q, want 503 {\"status\":\"unavailable\"}", status, body)
		}
		if !strings.Contains(logged.String(), "health check") {
			t.Errorf("the failed health check was not logged: %q", logged)
		}
	})
}

func TestStatic(t *testing.T) {
	db := storagetest.Open(t, storage.SQLite)
	files := fstest.MapFS{"css/parley.css": {Data: []byte("body { margin: 0 }")}}

	app := web.New(web.Options{DB: db, Static: files})
	status, header, body := do(t, app, http.MethodGet, "/static/css/parley.css")
	if status != http.StatusOK || body != "body { margin: 0 }" {
		t.Errorf("GET a static file = %d %q", status, body)
	}
	if !strings.HasPrefix(header.Get("Content-Type"), "text/css") || !strings.Contains(header.Get("Cache-Control"), "max-age=") {
		t.Errorf("static file headers = %v", header)
	}
	if status, _, _ := do(t, app, http.MethodGet, "/static/css/missing.css"); status != http.StatusNotFound {
		t.Errorf("GET a missing static file = %d, want 404", status)
	}

	// Without files there is no /static at all.
	bare := web.New(web.Options{DB: db})
	if status, _, _ := do(t, bare, http.MethodGet, "/static/css/parley.css"); status != http.StatusNotFound {
		t.Errorf("GET /static without files = %d, want 404", status)
	}
}

func TestSetup(t *testing.T) {
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		ctx := context.Background()
		app := web.New(web.Options{DB: db})
		// No code kept yet: nothing is a valid code, the empty one included.
		for _, target := range []string{"/setup", "/setup?code=", "/setup?code=x"} {
			if status, _, _ := do(t, app, http.MethodGet, target); status != http.StatusNotFound {
				t.Errorf("GET %s before any code exists = %d, want 404", target, status)
			}
		}
		if err := db.SetSetting(ctx, storage.SettingSetupCode, "the-code"); err != nil {
			t.Fatal(err)
		}
		status, header, body := do(t, app, http.MethodGet, "/setup?code=the-code")
		if status != http.StatusOK || header.Get("Cache-Control") != "no-store" ||
			!strings.HasPrefix(header.Get("Content-Type"), "text/html") {
			t.Errorf("GET /setup with the code = %d %v", status, header)
		}
		page, err := goquery.NewDocumentFromReader(strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		if page.Find(`[data-page="setup"]`).Length() != 1 {
			t.Errorf("GET /setup with the code is not the setup page:\n%s", body)
		}
		for _, target := range []string{"/setup", "/setup?code=the-cod", "/setup?code=the-code2", "/setup?code=THE-CODE"} {
			if status, _, _ := do(t, app, http.MethodGet, target); status != http.StatusNotFound {
				t.Errorf("GET %s = %d, want 404", target, status)
			}
		}
		// Once an account exists the address is gone, code or not.
		if _, err := db.CreateUser(ctx, "alice", "$argon2id$x"); err != nil {
			t.Fatal(err)
		}
		if status, _, _ := do(t, app, http.MethodGet, "/setup?code=the-code"); status != http.StatusNotFound {
			t.Errorf("GET /setup with the code after the first account = %d, want 404", status)
		}
	})
}

// An error or a panic inside a handler reaches the client as the forum's 500 page, without
// its detail, and the log as all of it.
func TestInternalErrorsStayInside(t *testing.T) {
	db := storagetest.Open(t, storage.SQLite)
	log, logged := quiet()
	app := web.New(web.Options{DB: db, Logger: log})
	app.Get("/boom", func(c *fiber.Ctx) error { panic("the secret detail") })
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	for _, target := range []string{"/setup?code=x", "/boom"} {
		status, _, body := do(t, app, http.MethodGet, target)
		if status != http.StatusInternalServerError || !strings.Contains(body, `data-status="500"`) ||
			strings.Contains(body, "secret") || strings.Contains(body, "closed") {
			t.Errorf("GET %s = %d %q, want the 500 page without the fault", target, status, body)
		}
	}
	for _, want := range []string{"database is closed", "the secret detail", "goroutine"} {
		if !strings.Contains(logged.String(), want) {
			t.Errorf("the log does not mention %q: %s", want, logged)
		}
	}
	// The app still answers after a panic.
	if status, _, _ := do(t, app, http.MethodGet, "/setup"); status != http.StatusInternalServerError {
		t.Errorf("after a panic GET /setup = %d", status)
	}
}
