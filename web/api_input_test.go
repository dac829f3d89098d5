package web_test

import (
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/gofiber/fiber/v2"

	"github.com/parleyforum/parley/protocol"
	"github.com/parleyforum/parley/storage"
	"github.com/parleyforum/parley/storage/storagetest"
)

// How a request becomes the operation's input object: path id, query parameters and body.
// The operation decides; the wanted message fragment shows whose words answer.
func TestAPIInput(t *testing.T) {
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		f := newForum(t, db, protocol.Limits{})
		th, _ := f.ask(f.alice, "Which port?")
		n := strings.TrimPrefix(th, "th_")
		json := map[string]string{"Content-Type": "application/json"}
		for _, c := range []struct {
			name    string
			req     request
			status  int
			message string // a fragment of the refusal's message
		}{
			{"path id prefixed", request{method: "GET", target: "/v1/threads/" + th}, 200, ""},
			{"path id bare", request{method: "GET", target: "/v1/threads/" + n}, 200, ""},
			{"path id of another kind", request{method: "GET", target: "/v1/threads/msg_1"}, 400, "field thread must be th_<n>"},
			{"path id not a number", request{method: "GET", target: "/v1/threads/port"}, 400, "field thread must be th_<n>"},
			{"the path's thread in the query too", request{method: "GET", target: "/v1/threads/" + th + "?thread=" + n}, 200, ""},
			{"another thread in the query", request{method: "GET", target: "/v1/threads/" + th + "?thread=th_999"}, 400, "is not the thread of the path"},
			{"unknown query parameter", request{method: "GET", target: "/v1/threads?sort=new"}, 400, "unknown field sort"},
			{"query parameter on the manifest", request{method: "GET", target: "/v1/manifest?v=2"}, 400, "unknown field v"},
			{"query parameter on the manifest, without a token", request{method: "GET", target: "/.well-known/parley?v=2", token: "-"}, 400, "unknown field v"},
			{"unknown query parameter on a path", request{method: "GET", target: "/v1/threads/" + th + "/events?limit=5"}, 400, "unknown field limit"},
			{"repeated query parameter", request{method: "GET", target: "/v1/threads?state=open&state=closed"}, 400, "field state must be a string"},
			{"state not a state", request{method: "GET", target: "/v1/threads?state=done"}, 400, "field state"},
			{"limit above the maximum is clamped", request{method: "GET", target: "/v1/threads?limit=100000"}, 200, ""},
			{"limit not a number", request{method: "GET", target: "/v1/inbox?limit=ten"}, 400, "field limit must be a whole number"},
			{"wait_seconds above the maximum is clamped", request{method: "GET", target: "/v1/inbox?wait_seconds=999&limit=1"}, 200, ""},
			{"wait_seconds not a number", request{method: "GET", target: "/v1/inbox?wait_seconds=soon"}, 400, "field wait_seconds"},
			{"extension not an extension", request{method: "GET", target: "/v1/inbox?extension=-x"}, 400, "field extension"},
			{"cursor not a cursor", request{method: "GET", target: "/v1/threads/" + th + "/events?since=abc"}, 400, "field since is not a cursor"},
			{"inbox cursor of another kind", request{method: "GET", target: "/v1/inbox?since=dDEuNQ"}, 400, "field since is not a cursor"},

			{"body the path's thread", request{method: "POST", target: "/v1/threads/" + th + "/mark", token: f.human, body: `{"thread":` + n + `,"state":"open"}`}, 200, ""},
			{"body thread null", request{method: "POST", target: "/v1/threads/" + th + "/mark", token: f.human, body: `{"thread":null,"state":"open"}`}, 200, ""},
			{"body another thread", request{method: "POST", target: "/v1/threads/" + th + "/mark", token: f.human, body: `{"thread":"th_999","state":"open"}`}, 400, "is not the thread of the path"},
			{"body without its field", request{method: "POST", target: "/v1/threads/" + th + "/mark", token: f.human}, 400, "field state must be one of"},
			{"body unknown field", request{method: "POST", target: "/v1/threads/" + th + "/confirm", token: f.mod, body: `{"why":"because"}`}, 400, "unknown field why"},
			{"body field also in the query", request{method: "POST", target: "/v1/messages?kind=note", token: f.bob, body: `{"kind":"note","thread":"` + th + `","body":"x"}`}, 400, "given both in the query and in the body"},
			{"body field from the query", request{method: "POST", target: "/v1/messages?thread=" + th, token: f.bob, body: `{"kind":"note","body":"From the query."}`}, 201, ""},
			{"body empty", request{method: "POST", target: "/v1/messages", token: f.bob, header: map[string]string{"Content-Type": ""}}, 400, "field kind is missing"},
			{"body not an object", request{method: "POST", target: "/v1/messages", token: f.bob, body: `["note"]`}, 400, "must be a JSON object"},
			{"body null", request{method: "POST", target: "/v1/threads/" + th + "/confirm?x=1", token: f.mod, body: `null`}, 400, "must be a JSON object"},
			{"body not JSON", request{method: "POST", target: "/v1/messages", token: f.bob, body: `{"kind":"note",`}, 400, "not valid JSON"},
			{"body with data after it", request{method: "POST", target: "/v1/messages", token: f.bob, body: `{"kind":"ask","body":"a"} {}`}, 400, "after the JSON object"},

			{"Content-Type with charset", request{method: "POST", target: "/v1/messages", token: f.bob, body: `{"kind":"ask","body":"a"}`, header: map[string]string{"Content-Type": "application/json; charset=UTF-8"}}, 201, ""},
			{"Content-Type absent", request{method: "POST", target: "/v1/messages", token: f.bob, body: `{"kind":"ask","body":"b"}`, header: map[string]string{"Content-Type": ""}}, 201, ""},
			{"Content-Type of a form", request{method: "POST", target: "/v1/messages", token: f.bob, body: `{"kind":"ask","body":"c"}`, header: map[string]string{"Content-Type": "application/x-www-form-urlencoded"}}, 400, "Content-Type"},
			{"Content-Type of text", request{method: "POST", target: "/v1/messages", token: f.bob, body: `{"kind":"ask","body":"d"}`, header: map[string]string{"Content-Type": "text/plain"}}, 400, "Content-Type"},
			{"Content-Type JSON in another charset", request{method: "POST", target: "/v1/messages", token: f.bob, body: `{"kind":"ask","body":"e"}`, header: map[string]string{"Content-Type": "application/json; charset=latin1"}}, 400, "Content-Type"},
			{"Content-Encoding gzip", request{method: "POST", target: "/v1/messages", token: f.bob, body: `{"kind":"ask","body":"f"}`, header: map[string]string{"Content-Encoding": "gzip"}}, 400, "Content-Encoding"},
			{"JSON declared, nothing else wrong", request{method: "POST", target: "/v1/messages", token: f.bob, body: `{"kind":"ask","body":"g"}`, header: json}, 201, ""},
		} {
			t.Run(c.name, func(t *testing.T) {
				switch c.req.token {
				case "":
					c.req.token = f.reader
				case "-":
					c.req.token = ""
				}
				got := f.do(c.req)
				if got.status != c.status || (c.message != "" && !strings.Contains(got.at("message"), c.message)) {
					t.Errorf("%s %s = %d %s, want %d %q", c.req.method, c.req.target, got.status, got.body, c.status, c.message)
				}
				if c.status >= 400 && got.reason() != string(protocol.ReasonInvalidBody) {
					t.Errorf("reason %q, want invalid_body", got.reason())
				}
			})
		}
	})
}

// What the routes do not cover answers in § 9's form too: an unknown route, a method a path
// does not serve, and a fault of the server, which reaches the log and not the client.
func TestAPIErrors(t *testing.T) {
	db := storagetest.Open(t, storage.SQLite)
	f := newForum(t, db, protocol.Limits{}, func(app *fiber.App) {
		app.Get("/v1/test/fault", func(*fiber.Ctx) error { return errors.New("the secret detail") })
		app.Get("/v1/test/panic", func(*fiber.Ctx) error { panic("the secret panic") })
	})
	for _, c := range []struct {
		method, target string
		status         int
		reason, allow  string
	}{
		{"GET", "/v1/nothing", 404, "not_found", ""},
		{"GET", "/v1", 404, "not_found", ""},
		{"POST", "/v1/threads/th_1/close", 404, "not_found", ""},
		{"DELETE", "/v1/threads/th_1", 405, "not_found", "GET, HEAD"},
		{"GET", "/v1/messages", 405, "not_found", "POST"},
		{"PUT", "/v1/threads/1/confirm", 405, "not_found", "POST"},
		{"POST", "/.well-known/parley", 405, "not_found", "GET, HEAD"},
		{"GET", "/v1/test/fault", 500, "internal", ""},
		{"GET", "/v1/test/panic", 500, "internal", ""},
	} {
		got := f.do(request{method: c.method, target: c.target, token: f.alice})
		if got.status != c.status || got.reason() != c.reason || got.json["status"] != float64(c.status) || !jsonContent(got) {
			t.Errorf("%s %s = %d %v %s, want %d %s", c.method, c.target, got.status, got.header, got.body, c.status, c.reason)
		}
		if got.header.Get("Allow") != c.allow {
			t.Errorf("%s %s: Allow = %q, want %q", c.method, c.target, got.header.Get("Allow"), c.allow)
		}
		if strings.Contains(string(got.body), "secret") {
			t.Errorf("%s %s leaks the fault: %s", c.method, c.target, got.body)
		}
	}
	for _, want := range []string{"the secret detail", "the secret panic"} {
		if !strings.Contains(f.logs.String(), want) {
			t.Errorf("the log does not have %q: %s", want, f.logs)
		}
	}
	// Outside the API, errors stay as the pages answer them.
	if got := f.get("/nothing", ""); got.status != http.StatusNotFound || jsonContent(got) {
		t.Errorf("GET /nothing = %d %v, want the pages' own 404", got.status, got.header)
	}
}
