package web_test

import (
	"context"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/parleyforum/parley/storage"
	"github.com/parleyforum/parley/storage/storagetest"
	"github.com/parleyforum/parley/web"
)

// hungSite is a site over a database the test can make hang: on Postgres a proxy that stops
// forwarding, on SQLite another connection holding the write lock (which hangs writes only).
type hungSite struct {
	f            *forum
	kind         storage.Kind
	hang, answer func()
}

const hungDeadline = 300 * time.Millisecond

func eachHungSite(t *testing.T, fn func(t *testing.T, h hungSite)) {
	site := func(t *testing.T, db *storage.DB) *forum {
		logs := new(syncBuffer)
		f := &forum{t: t, db: db, logs: logs}
		f.app = web.New(web.Options{DB: db, Version: "test", RequestDeadline: hungDeadline,
			Logger: slog.New(slog.NewTextHandler(logs, nil))})
		f.base = serve(t, f.app)
		f.alice = f.token("ainotes:alice", false, "read,write", nil)
		f.bob = f.token("ainotes:bob", false, "read,write,verify", nil)
		f.human = f.token("human:ann", true, "read,write,lock,verify", nil)
		return f
	}
	t.Run("sqlite", func(t *testing.T) {
		db := storagetest.Open(t, storage.SQLite)
		var release func()
		fn(t, hungSite{f: site(t, db), kind: storage.SQLite,
			hang: func() {
				conn, err := db.Conn(context.Background())
				if err != nil {
					t.Fatal(err)
				}
				tx, err := conn.BeginTx(context.Background(), nil) // BEGIN IMMEDIATE: the write lock
				if err != nil {
					t.Fatal(err)
				}
				release = func() { _ = tx.Rollback(); conn.Close() }
				t.Cleanup(release)
			},
			answer: func() { release() },
		})
	})
	t.Run("postgres", func(t *testing.T) {
		db, p := storagetest.OpenProxied(t, storage.Options{StatementTimeout: hungDeadline})
		fn(t, hungSite{f: site(t, db), kind: storage.Postgres, hang: p.Freeze, answer: p.Thaw})
	})
}

// hungClient gives up long after any deadline: a hang fails the test instead of holding it.
var hungClient = &http.Client{Timeout: 20 * time.Second,
	CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

// With the database hung, every write over /v1 and over MCP is answered unavailable soon
// after the request's deadline (503 with Retry-After, an isError result), and none of them
// is written.
func TestHungDatabaseEveryWriteIsUnavailable(t *testing.T) {
	eachHungSite(t, func(t *testing.T, h hungSite) {
		f := h.f
		th, _ := f.ask(f.alice, "Does the build pass?")
		claim := f.must(f.post("/v1/claims", f.alice, `{"thread":"`+th+`","statement":"it passes","evidence":[{"kind":"url","ref":"https://example.org/1"}]}`),
			http.StatusCreated).at("claim", "id")
		ev := `"evidence":[{"kind":"url","ref":"https://example.org/2"}]`
		// A read first, so that the agents' tokens are verified (and kept) before the hang:
		// the writes then reach their transactions.
		f.must(f.get("/v1/threads/"+th, f.bob), http.StatusOK)
		before := f.must(f.get("/v1/threads/"+th, f.alice), http.StatusOK)

		writes := []request{
			{method: http.MethodPost, target: "/v1/messages", token: f.bob, body: `{"kind":"answer","thread":"` + th + `","body":"Yes."}`},
			{method: http.MethodPost, target: "/v1/messages", token: f.bob, body: `{"kind":"ask","body":"Another?"}`},
			{method: http.MethodPost, target: "/v1/threads/" + th + "/confirm", token: f.human},
			{method: http.MethodPost, target: "/v1/threads/" + th + "/mark", token: f.human, body: `{"state":"decided"}`},
			{method: http.MethodPost, target: "/v1/claims", token: f.bob, body: `{"thread":"` + th + `","statement":"it fails",` + ev + `}`},
			{method: http.MethodPost, target: "/v1/claims/" + claim + "/attest", token: f.bob, body: `{` + ev + `}`},
			{method: http.MethodPost, target: "/v1/claims/" + claim + "/refute", token: f.bob, body: `{"body":"no",` + ev + `}`},
			{method: http.MethodPost, target: "/v1/claims/" + claim + "/verify", token: f.bob, body: `{}`},
			{method: http.MethodPost, target: "/v1/claims/" + claim + "/mark", token: f.human, body: `{"state":"refuted"}`},
			{method: http.MethodPut, target: "/v1/artifacts", token: f.bob, body: `the log`},
			{method: http.MethodPut, target: "/v1/keys", token: f.bob, body: `{"public_key":"11qYAYKxCrfVS/7TyWQHOg7hcvPapiMlrwIaaPcHURo="}`},
		}
		tools := []struct{ name, args string }{
			{"send", `{"kind":"answer","thread":"` + th + `","body":"Yes."}`},
			{"confirm", `{"thread":"` + th + `"}`},
			{"claim_assert", `{"thread":"` + th + `","statement":"it fails",` + ev + `}`},
			{"claim_attest", `{"claim":"` + claim + `",` + ev + `}`},
			{"claim_refute", `{"claim":"` + claim + `","body":"no",` + ev + `}`},
			{"claim_verify", `{"claim":"` + claim + `"}`},
			{"artifact_put", `{"content_base64":"dGhlIGxvZw=="}`},
			{"key_register", `{"public_key":"11qYAYKxCrfVS/7TyWQHOg7hcvPapiMlrwIaaPcHURo="}`},
		}

		h.hang()
		bound := hungDeadline + storage.CommitGrace + 2*time.Second
		for _, r := range writes {
			start := time.Now()
			status, retryAfter, body := doWith(t, hungClient, f.base, r)
			if took := time.Since(start); took > bound {
				t.Errorf("%s %s took %v with the database hung", r.method, r.target, took)
			}
			if status != http.StatusServiceUnavailable || retryAfter == "" || !strings.Contains(body, `"reason":"unavailable"`) {
				t.Errorf("%s %s with the database hung: %d Retry-After %q %s", r.method, r.target, status, retryAfter, body)
			}
		}
		for _, tool := range tools {
			start := time.Now()
			token := f.bob
			if tool.name == "confirm" {
				token = f.human
			}
			got := f.postMCP(toolCall(tool.name, tool.args), http.Header{"Authorization": {"Bearer " + token}})
			if took := time.Since(start); took > bound {
				t.Errorf("MCP %s took %v with the database hung", tool.name, took)
			}
			if r := refusalOfTool(got); r["reason"] != "unavailable" {
				t.Errorf("MCP %s with the database hung: %d %.300s", tool.name, got.status, got.body)
			}
		}
		h.answer()
		recovered(t, f)

		if after := f.must(f.get("/v1/threads/"+th, f.alice), http.StatusOK); !sameJSON(withoutReadTime(after.json), withoutReadTime(before.json)) {
			t.Errorf("writes answered unavailable changed the thread:\nbefore %s\nafter  %s", before.body, after.body)
		}
		f.must(f.get("/v1/artifacts/sha256:"+"1d6e5c1e1b1f4ec0a1fcc5e1a1cbd8e6c2dfc9d3e2b1f2c8a6f0b5d9a2e6c3f1", f.bob), http.StatusNotFound)
		if strings.Contains(f.logs.String(), "request failed") {
			t.Errorf("an outage was logged as a fault of the server: %s", f.logs.String())
		}
	})
}

// With the database hung, every page — read or form post — is answered with the forum's own
// 503 page (HTML, in the reader's language, Retry-After) soon after the deadline: never a
// bare 500, never a hang.
func TestHungDatabaseEveryPageIsTheUnavailablePage(t *testing.T) {
	eachHungSite(t, func(t *testing.T, h hungSite) {
		f := h.f
		f.account("ada", true)
		th, _ := f.ask(f.alice, "Does the build pass?")
		claim := f.must(f.post("/v1/claims", f.alice, `{"thread":"`+th+`","statement":"it passes","evidence":[{"kind":"url","ref":"https://example.org/1"}]}`),
			http.StatusCreated).at("claim", "id")
		ada := f.signedIn(t, "ada")
		ada.get("/threads/"+th).must(t, http.StatusOK)
		csrf := ada.csrf
		anon := f.browser(t)
		anon.get("/login").must(t, http.StatusOK)

		type visit struct {
			who          *browser
			method, path string
			form         url.Values
		}
		pages := []visit{
			{ada, http.MethodGet, "/", nil},
			{ada, http.MethodGet, "/threads/" + th, nil},
			{ada, http.MethodGet, "/moderation", nil},
			{ada, http.MethodGet, "/search?q=build", nil},
			{ada, http.MethodGet, "/graph", nil},
			{ada, http.MethodGet, "/graph/export?format=dot", nil},
			{ada, http.MethodGet, "/threads/" + th + "/graph", nil},
			{ada, http.MethodGet, "/tokens", nil},
			{ada, http.MethodGet, "/artifacts/sha256:" + strings.Repeat("ab", 32), nil},
			{anon, http.MethodGet, "/setup?code=nothing", nil},
			{ada, http.MethodPost, "/threads/" + th + "/messages", url.Values{"kind": {"note"}, "body": {"hello?"}}},
			{ada, http.MethodPost, "/threads/" + th + "/confirm", url.Values{}},
			{ada, http.MethodPost, "/threads/" + th + "/mark", url.Values{"state": {"decided"}}},
			{ada, http.MethodPost, "/claims/" + claim + "/verify", url.Values{}},
			{ada, http.MethodPost, "/claims/" + claim + "/mark", url.Values{"state": {"refuted"}}},
			{ada, http.MethodPost, "/tokens", url.Values{"handle": {"carl"}, "rights": {"read"}}},
			{ada, http.MethodPost, "/tokens/1/revoke", url.Values{}},
			{ada, http.MethodPost, "/logout", url.Values{}},
			{anon, http.MethodPost, "/login", url.Values{"name": {"ada"}, "password": {thePassword}}},
			{anon, http.MethodPost, "/setup", url.Values{"code": {"nothing"}, "name": {"bea"}, "password": {thePassword}, "password2": {thePassword}}},
		}
		if h.kind == storage.SQLite {
			// A held write lock hangs the writes only: the page posts that write.
			pages = []visit{
				{ada, http.MethodPost, "/threads/" + th + "/messages", url.Values{"kind": {"note"}, "body": {"hello?"}}},
				{ada, http.MethodPost, "/threads/" + th + "/confirm", url.Values{}},
				{ada, http.MethodPost, "/threads/" + th + "/mark", url.Values{"state": {"decided"}}},
				{ada, http.MethodPost, "/claims/" + claim + "/verify", url.Values{}},
				{ada, http.MethodPost, "/claims/" + claim + "/mark", url.Values{"state": {"refuted"}}},
				{ada, http.MethodPost, "/tokens", url.Values{"handle": {"carl"}, "rights": {"read"}}},
			}
		}

		h.hang()
		bound := hungDeadline + storage.CommitGrace + 2*time.Second
		for _, v := range pages {
			v.who.client.Timeout = 20 * time.Second
			if v.form != nil {
				if v.who == ada {
					v.form.Set("csrf", csrf)
				} else {
					v.form.Set("csrf", anon.csrf)
				}
			}
			start := time.Now()
			p := v.who.do(v.method, v.path, v.form, "Accept-Language", "de")
			if took := time.Since(start); took > bound {
				t.Errorf("%s %s took %v with the database hung", v.method, v.path, took)
			}
			if p.status != http.StatusServiceUnavailable || !strings.HasPrefix(p.header.Get("Content-Type"), "text/html") ||
				p.header.Get("Retry-After") == "" || p.find("main").Length() == 0 || !strings.Contains(p.body, `lang="de"`) {
				t.Errorf("%s %s with the database hung: %d %s Retry-After %q\n%.400s", v.method, v.path, p.status,
					p.header.Get("Content-Type"), p.header.Get("Retry-After"), p.body)
			}
		}
		h.answer()
		recovered(t, f)
		// The pool's other connections come back one by one (a connection held through the
		// hang ends its statement first): the page answers again within the same bound.
		for end := time.Now().Add(10 * time.Second); ; time.Sleep(100 * time.Millisecond) {
			if p := ada.get("/threads/" + th); p.status == http.StatusOK {
				break
			} else if time.Now().After(end) {
				t.Fatalf("the thread page 10 s after the database answers again: %d", p.status)
			}
		}
		if strings.Contains(f.logs.String(), "request failed") {
			t.Errorf("an outage was logged as a fault of the server: %s", f.logs.String())
		}
	})
}

// recovered waits until the server answers again after the database came back, as a client
// told Retry-After does: the first requests may still meet connections the hang broke.
func recovered(t *testing.T, f *forum) {
	t.Helper()
	for end := time.Now().Add(10 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		r := f.get("/v1/threads", f.alice)
		if r.status == http.StatusOK {
			t.Logf("answering again %v after the database", 10*time.Second-time.Until(end))
			return
		}
		if time.Now().After(end) {
			t.Fatalf("10 s after the database answers again: %d %s", r.status, r.body)
		}
	}
}
