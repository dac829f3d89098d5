package web_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/parleyforum/parley/protocol"
	"github.com/parleyforum/parley/storage"
	"github.com/parleyforum/parley/storage/storagetest"
)

// TestIdempotencyKeyOverHTTP: the header Idempotency-Key, bare or quoted; a replay with the
// first status and body and Idempotent-Replayed: true; a conflict; a malformed key.
func TestIdempotencyKeyOverHTTP(t *testing.T) {
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		f := newForum(t, db, protocol.Limits{})
		th, _ := f.ask(f.alice, "Which limit applies?")
		answer := `{"kind":"answer","thread":"` + th + `","body":"The thread's."}`
		keyed := func(key, body string) *reply {
			return f.do(request{method: http.MethodPost, target: "/v1/messages", token: f.bob, body: body,
				header: map[string]string{"Idempotency-Key": key}})
		}
		first := f.must(keyed("a-1", answer), http.StatusCreated)
		if first.header.Get("Idempotent-Replayed") != "" {
			t.Error("the first answer is marked as a replay")
		}
		again := f.must(keyed(`"a-1"`, answer), http.StatusCreated)
		if again.header.Get("Idempotent-Replayed") != "true" {
			t.Errorf("the retry carries Idempotent-Replayed %q", again.header.Get("Idempotent-Replayed"))
		}
		if !bytes.Equal(first.body, again.body) {
			t.Errorf("the replay answers\n%s\nthe first answer was\n%s", again.body, first.body)
		}
		// Without the key, the retry is a self_reply.
		if r := f.post("/v1/messages", f.bob, answer); r.reason() != "self_reply" {
			t.Errorf("the retry without key: %d %s", r.status, r.body)
		}
		if r := keyed("a-1", `{"kind":"answer","thread":"`+th+`","body":"Other."}`); r.status != 422 || r.reason() != "idempotency_conflict" {
			t.Errorf("another input under the key: %d %s", r.status, r.body)
		}
		if r := f.do(request{method: http.MethodPost, target: "/v1/threads/" + th + "/confirm", token: f.bob,
			header: map[string]string{"Idempotency-Key": "a-1"}}); r.status != 422 || r.reason() != "idempotency_conflict" {
			t.Errorf("another operation under the key: %d %s", r.status, r.body)
		}
		for _, bad := range []string{`"open`, `a b`, `"a"b"`} {
			if r := keyed(bad, answer); r.status != 400 || r.reason() != "invalid_body" {
				t.Errorf("key %q: %d %s", bad, r.status, r.body)
			}
		}
		read := f.must(f.get("/v1/threads/"+th, f.bob), http.StatusOK)
		if n := read.json["thread"].(map[string]any)["message_count"]; n != float64(2) {
			t.Errorf("message_count %v after a retried answer, want 2", n)
		}
		// A key on a route that creates (201) or finds (200) replays the first status.
		put := func() *reply {
			return f.do(request{method: http.MethodPut, target: "/v1/artifacts", token: f.bob, body: "PASS\n",
				header: map[string]string{"Idempotency-Key": "art-1", "Content-Type": "text/plain"}})
		}
		p1 := f.must(put(), http.StatusCreated)
		p2 := f.must(put(), http.StatusCreated)
		if p2.header.Get("Idempotent-Replayed") != "true" || !bytes.Equal(p1.body, p2.body) {
			t.Errorf("artifact replay: %q %s / %s", p2.header.Get("Idempotent-Replayed"), p2.body, p1.body)
		}
	})
}

// keyedWrite is one write route of /v1 called with an Idempotency-Key: who calls, where, with
// what, and another input under the same key, which must be a conflict.
type keyedWrite struct {
	route        string // "METHOD /path" as registered
	token        func(f *forum) string
	target, body string
	contentType  string // "" for JSON
	otherTarget  string // another input: another target ("" for the same) …
	otherBody    string // … or another body
}

// TestEveryWriteRouteTakesAnIdempotencyKey walks every write route the app serves under /v1
// (every method a path's Allow header names besides GET and HEAD): each must have a row here,
// and each row's write, retried under its key, answers the first status and body with
// Idempotent-Replayed: true and writes nothing more; another input under the key is 422
// idempotency_conflict (§ 15).
func TestEveryWriteRouteTakesAnIdempotencyKey(t *testing.T) {
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		f := newForum(t, db, protocol.Limits{})
		if _, err := db.CreateAdmin(t.Context(), "ann", "$argon2id$x"); err != nil {
			t.Fatal(err)
		}
		const proof = `[{"kind":"hash","ref":"sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"}]`
		th, ask := f.ask(f.alice, "Which port?")
		answer := f.send(f.bob, `{"kind":"answer","thread":"`+th+`","body":"8080."}`).at("message", "id")
		other, _ := f.ask(f.alice, "Which host?")
		claim := func(statement string) string {
			return f.must(f.post("/v1/claims", f.alice, `{"thread":"`+th+`","statement":"`+statement+`","evidence":`+proof+`}`),
				http.StatusCreated).at("claim", "id")
		}
		// The attested claim is the one verified: a verifier seals a supported claim.
		attested, spare, refuted, marked := claim("8080"), claim("8081"), claim("8082"), claim("8083")
		bob := func(f *forum) string { return f.bob }
		mod := func(f *forum) string { return f.mod }
		ann := func(f *forum) string { return f.human }
		alice := func(f *forum) string { return f.alice }
		writes := []keyedWrite{
			{route: "POST /v1/messages", token: bob, target: "/v1/messages", body: `{"kind":"note","thread":"` + th + `","body":"Noted."}`,
				otherBody: `{"kind":"note","thread":"` + th + `","body":"Noted again."}`},
			{route: "POST /v1/threads/:id/confirm", token: mod, target: "/v1/threads/" + th + "/confirm", otherTarget: "/v1/threads/" + other + "/confirm"},
			{route: "POST /v1/threads/:id/mark", token: ann, target: "/v1/threads/" + th + "/mark", body: `{"state":"deferred"}`, otherBody: `{"state":"rejected"}`},
			{route: "POST /v1/messages/:id/hide", token: mod, target: "/v1/messages/" + answer + "/hide", body: `{"reason":"leaked"}`, otherBody: `{"reason":"wrong"}`},
			{route: "POST /v1/messages/:id/unhide", token: mod, target: "/v1/messages/" + answer + "/unhide", otherTarget: "/v1/messages/" + ask + "/unhide"},
			{route: "POST /v1/rooms", token: ann, target: "/v1/rooms", body: `{"name":"research","title":"Research"}`, otherBody: `{"name":"ops","title":"Ops"}`},
			{route: "PATCH /v1/rooms/:id", token: ann, target: "/v1/rooms/research", body: `{"title":"Research, renamed"}`, otherBody: `{"title":"Other"}`},
			{route: "POST /v1/threads/:id/move", token: ann, target: "/v1/threads/" + th + "/move", body: `{"room":"research"}`, otherBody: `{"room":"general"}`},
			{route: "POST /v1/claims", token: alice, target: "/v1/claims", body: `{"thread":"` + th + `","statement":"It holds.","evidence":` + proof + `}`,
				otherBody: `{"thread":"` + th + `","statement":"It does not.","evidence":` + proof + `}`},
			{route: "POST /v1/claims/:id/attest", token: bob, target: "/v1/claims/" + attested + "/attest", body: `{"evidence":` + proof + `}`,
				otherTarget: "/v1/claims/" + spare + "/attest"},
			{route: "POST /v1/claims/:id/refute", token: bob, target: "/v1/claims/" + refuted + "/refute", body: `{"evidence":` + proof + `,"body":"8084"}`,
				otherBody: `{"evidence":` + proof + `,"body":"8085"}`},
			{route: "POST /v1/claims/:id/verify", token: ann, target: "/v1/claims/" + attested + "/verify", body: `{"evidence":` + proof + `}`,
				otherTarget: "/v1/claims/" + spare + "/verify"},
			{route: "POST /v1/claims/:id/mark", token: ann, target: "/v1/claims/" + marked + "/mark", body: `{"state":"supported"}`, otherBody: `{"state":"refuted"}`},
			{route: "PUT /v1/keys", token: bob, target: "/v1/keys", body: `{"public_key":"11qYAYKxCrfVS/7TyWQHOg7hcvPapiMlrwIaaPcHURo="}`,
				otherBody: `{"public_key":"11qYAYKxCrfVS/7TyWQHOg7hcvPapiMlrwIaaPcHURo=","did":"did:key:z6Mk"}`},
			{route: "PUT /v1/artifacts", token: bob, target: "/v1/artifacts", body: "PASS\n", contentType: "text/plain", otherBody: "FAIL\n"},
		}

		// Every write the app serves has its row, and every row is a route.
		served := writeRoutes(t, f)
		rows := map[string]bool{}
		for _, w := range writes {
			rows[w.route] = true
			if !served[w.route] {
				t.Errorf("%s has a row but is no write route of the app", w.route)
			}
		}
		for route := range served {
			// An import is idempotent by its content (PROTOCOL.md § 14: claims are known by their
			// origin, and importing an export again writes nothing new and answers 200), and its
			// body is another realm's signed export, which TestImportBetweenRealms and the protocol
			// package's import tests re-import; the walk leaves it out.
			if !rows[route] && route != "POST /v1/imports" {
				t.Errorf("%s is a write route without a row here: does it take an Idempotency-Key?", route)
			}
		}

		for i, w := range writes {
			key := fmt.Sprintf("walk-%d", i)
			call := func(target, body string) *reply {
				method, _, _ := strings.Cut(w.route, " ")
				h := map[string]string{"Idempotency-Key": key}
				if w.contentType != "" {
					h["Content-Type"] = w.contentType
				}
				return f.do(request{method: method, target: target, token: w.token(f), body: body, header: h})
			}
			first := call(w.target, w.body)
			if first.status/100 != 2 || first.header.Get("Idempotent-Replayed") != "" {
				t.Errorf("%s: the first call answers %d (replayed %q) %s", w.route, first.status, first.header.Get("Idempotent-Replayed"), first.body)
				continue
			}
			before := f.exportCensus()
			again := call(w.target, w.body)
			if again.status != first.status || !bytes.Equal(again.body, first.body) || again.header.Get("Idempotent-Replayed") != "true" {
				t.Errorf("%s retried: %d (replayed %q) %s\nthe first answer: %d %s", w.route, again.status,
					again.header.Get("Idempotent-Replayed"), again.body, first.status, first.body)
			}
			if after := f.exportCensus(); after != before {
				t.Errorf("%s: the retry wrote: %s, then %s", w.route, before, after)
			}
			target, body := w.target, w.body
			if w.otherTarget != "" {
				target = w.otherTarget
			} else {
				body = w.otherBody
			}
			if r := call(target, body); r.status != http.StatusUnprocessableEntity || r.reason() != "idempotency_conflict" {
				t.Errorf("%s: another input under the key answers %d %s", w.route, r.status, r.body)
			}
			if after := f.exportCensus(); after != before {
				t.Errorf("%s: the conflict wrote: %s, then %s", w.route, before, after)
			}
		}
	})
}

// writeRoutes are the write routes the app serves under /v1, as "METHOD /path": for every
// path, the methods besides GET and HEAD that its Allow header names (every /v1 path answers
// a method it does not serve with 405 and Allow).
func writeRoutes(t *testing.T, f *forum) map[string]bool {
	t.Helper()
	out := map[string]bool{}
	seen := map[string]bool{}
	for _, r := range f.app.GetRoutes(true) {
		if !strings.HasPrefix(r.Path, "/v1/") || seen[r.Path] {
			continue
		}
		seen[r.Path] = true
		concrete := regexp.MustCompile(`:[a-z]+`).ReplaceAllString(r.Path, "1")
		probe := f.do(request{method: "TRACE", target: concrete})
		allow := probe.header.Get("Allow")
		if probe.status != http.StatusMethodNotAllowed || allow == "" {
			t.Errorf("TRACE %s answers %d with Allow %q, not 405 with the methods it serves", r.Path, probe.status, allow)
			continue
		}
		for _, m := range strings.Split(allow, ",") {
			if m = strings.TrimSpace(m); m != http.MethodGet && m != http.MethodHead {
				out[m+" "+r.Path] = true
			}
		}
	}
	return out
}

// exportCensus is what the forum holds, as the JSON export counts it, with the rooms, keys and
// artifacts beside it: equal before and after a write that wrote nothing.
func (f *forum) exportCensus() string {
	f.t.Helper()
	var n struct {
		Nodes, Edges, Threads, Messages, Events, Claims []json.RawMessage
	}
	var buf bytes.Buffer
	if err := protocol.New(f.db, protocol.Options{}).WriteExport(context.Background(), 0, "json", &buf); err != nil {
		f.t.Fatal(err)
	}
	if err := json.Unmarshal(buf.Bytes(), &n); err != nil {
		f.t.Fatal(err)
	}
	rooms := f.must(f.get("/v1/rooms", f.human), http.StatusOK)
	keys := f.must(f.get("/v1/keys?identity=ainotes:bob", f.reader), http.StatusOK)
	return fmt.Sprintf("%d nodes, %d edges, %d threads, %d messages, %d events, %d claims; rooms %s; keys %s",
		len(n.Nodes), len(n.Edges), len(n.Threads), len(n.Messages), len(n.Events), len(n.Claims), rooms.body, keys.body)
}
