//go:build resources

package resources

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/parleyforum/parley/protocol"
	"github.com/parleyforum/parley/protocol/admission"
)

// row is one line of the matrix: a route or an MCP tool, called by the weakest kind of caller
// that may call it, on the largest thread where it takes one. Its class is the admission
// class (protocol/admission) whose bounds it is held to.
type row struct {
	name string // as the table shows it
	// route is the route ("GET /v1/threads/:id") or the tool ("tool read_thread") it covers;
	// several rows may cover one (the export's formats).
	route string
	who   callerKind
	class admission.Class
	make  func(f *forum, c caller) request
	// only are the cases the row runs in; nil for every case.
	only []string
	// degrades: with the database hung the row answers what it knows without it, by design
	// (the metrics), not its whole answer.
	degrades bool
}

// runs reports whether the row runs in case c.
func (r row) runs(c string) bool { return r.only == nil || slices.Contains(r.only, c) }

// rows are every route of the server and every MCP tool (completeness_test.go checks that no
// route or tool is without one). Reads come before writes, and the writes that would change
// what the reads read are refused by the largest thread's limits (it is full) or are undone
// by the row after them.
func rows() []row {
	var out []row
	add := func(who callerKind, class admission.Class, route string, make func(f *forum, c caller) request) {
		out = append(out, row{name: route, route: route, who: who, class: class, make: make})
	}
	variant := func(who callerKind, class admission.Class, route, name string, make func(f *forum, c caller) request) {
		out = append(out, row{name: name, route: route, who: who, class: class, make: make})
	}
	R, W := admission.Read, admission.Write

	// The API (§ 10), reads.
	add(anonymous, R, "GET /v1/manifest", get("/v1/manifest"))
	add(anonymous, R, "GET /.well-known/parley", get("/.well-known/parley"))
	add(anonymous, R, "GET /v1/schema/:id.json", get("/v1/schema/message.json"))
	add(reader, R, "GET /v1/threads", get("/v1/threads?limit=100"))
	add(reader, R, "GET /v1/threads/:id", func(f *forum, _ caller) request { return get("/v1/threads/"+f.thread)(f, caller{}) })
	add(reader, R, "GET /v1/threads/:id/events", func(f *forum, _ caller) request {
		return get("/v1/threads/"+f.thread+"/events")(f, caller{})
	})
	add(reader, R, "GET /v1/inbox", get("/v1/inbox?limit=100"))
	add(reader, R, "GET /v1/search", get("/v1/search?q=limit&limit=100"))
	add(reader, R, "GET /v1/claims/:id", func(f *forum, _ caller) request { return get("/v1/claims/"+f.claim)(f, caller{}) })
	add(reader, R, "GET /v1/graph", func(f *forum, _ caller) request { return get("/v1/graph?thread="+f.thread)(f, caller{}) })
	add(reader, R, "GET /v1/keys", get("/v1/keys?identity=ainotes:claimant"))
	add(reader, R, "GET /v1/identities", get("/v1/identities"))
	add(reader, R, "GET /v1/identities/:id", get("/v1/identities/ainotes:claimant"))
	add(reader, R, "GET /v1/rooms", get("/v1/rooms"))
	add(reader, R, "GET /v1/artifacts/:ref", func(f *forum, _ caller) request { return get("/v1/artifacts/"+f.artifact)(f, caller{}) })
	add(reader, R, "GET /v1/feed", func(*forum, caller) request { return request{method: http.MethodGet, target: "/v1/feed", stream: true} })
	// Each format alone, slowly read and on a hung database; ten readers at once export one
	// format each (issue 35: ten read tokens exporting the largest forum at once).
	formats := []string{"json", "jsonl", "graphml", "dot", "aif", "iccma"}
	for _, format := range formats {
		variant(reader, admission.Export, "GET /v1/export", "GET /v1/export?format="+format, get("/v1/export?format="+format))
		out[len(out)-1].only = []string{caseAlone, caseSlowReader, caseHung}
	}
	variant(reader, admission.Export, "GET /v1/export", "GET /v1/export?format= (one format each)", func(f *forum, c caller) request {
		return get("/v1/export?format="+formats[c.i%len(formats)])(f, c)
	})
	out[len(out)-1].only = []string{caseTogether}

	// The API, writes: on the largest thread, which is full.
	add(writer, W, "POST /v1/messages", func(f *forum, _ caller) request {
		return jsonBody(http.MethodPost, "/v1/messages", map[string]any{"kind": "note", "thread": f.thread, "body": strings.Repeat("n", 500)})
	})
	add(writer, W, "POST /v1/claims", func(f *forum, _ caller) request {
		return jsonBody(http.MethodPost, "/v1/claims", map[string]any{"thread": f.thread, "statement": "One claim too many.", "evidence": evidence()})
	})
	add(writer, W, "POST /v1/claims/:id/attest", func(f *forum, _ caller) request {
		return jsonBody(http.MethodPost, "/v1/claims/"+f.claim+"/attest", map[string]any{"evidence": evidence()})
	})
	add(writer, W, "POST /v1/claims/:id/refute", func(f *forum, _ caller) request {
		return jsonBody(http.MethodPost, "/v1/claims/"+f.claim+"/refute", map[string]any{"evidence": evidence(), "body": "It does not."})
	})
	add(verifier, W, "POST /v1/claims/:id/verify", func(f *forum, _ caller) request {
		return jsonBody(http.MethodPost, "/v1/claims/"+f.claim+"/verify", map[string]any{})
	})
	add(human, W, "POST /v1/claims/:id/mark", func(f *forum, _ caller) request {
		return jsonBody(http.MethodPost, "/v1/claims/"+f.claim+"/mark", map[string]any{"state": "unverified"})
	})
	add(locker, W, "POST /v1/threads/:id/confirm", func(f *forum, _ caller) request {
		return jsonBody(http.MethodPost, "/v1/threads/"+f.thread+"/confirm", map[string]any{})
	})
	add(human, W, "POST /v1/threads/:id/mark", func(f *forum, _ caller) request {
		return jsonBody(http.MethodPost, "/v1/threads/"+f.thread+"/mark", map[string]any{"state": "answered"})
	})
	add(human, W, "POST /v1/threads/:id/move", func(f *forum, _ caller) request {
		return jsonBody(http.MethodPost, "/v1/threads/"+f.thread+"/move", map[string]any{"room": "general"})
	})
	add(locker, W, "POST /v1/messages/:id/hide", func(f *forum, _ caller) request {
		return jsonBody(http.MethodPost, "/v1/messages/"+f.root+"/hide", map[string]any{"reason": "Hidden by the resource matrix."})
	})
	add(locker, W, "POST /v1/messages/:id/unhide", func(f *forum, _ caller) request {
		return jsonBody(http.MethodPost, "/v1/messages/"+f.root+"/unhide", map[string]any{})
	})
	add(writer, W, "PUT /v1/artifacts", func(f *forum, c caller) request {
		return request{method: http.MethodPut, target: "/v1/artifacts", contentType: "text/plain", body: largestArtifact(c)}
	})
	add(writer, W, "PUT /v1/keys", func(*forum, caller) request {
		return jsonBody(http.MethodPut, "/v1/keys", map[string]any{"public_key": newPublicKey()})
	})
	add(admin, W, "POST /v1/rooms", func(*forum, caller) request {
		return jsonBody(http.MethodPost, "/v1/rooms", map[string]any{"name": unique("matrix-room-"), "title": "A room of the matrix"})
	})
	add(admin, W, "PATCH /v1/rooms/:id", func(*forum, caller) request {
		return jsonBody(http.MethodPatch, "/v1/rooms/elsewhere", map[string]any{"description": unique("Described by the matrix ")})
	})
	add(admin, admission.Import, "POST /v1/imports", func(f *forum, _ caller) request {
		return request{method: http.MethodPost, target: "/v1/imports", contentType: "application/json", body: f.trustedExport()}
	})
	variant(admin, admission.Import, "POST /v1/imports", "POST /v1/imports (declares import_max_bytes + 1)", func(*forum, caller) request {
		return request{method: http.MethodPost, target: "/v1/imports", contentType: "application/json",
			declared: importMaxBytes + 1}
	})

	// MCP: every tool, as the same callers.
	addTool := func(who callerKind, class admission.Class, tool string, args func(f *forum) map[string]any) {
		out = append(out, row{name: "tool " + tool, route: "tool " + tool, who: who, class: class,
			make: func(f *forum, _ caller) request {
				return request{method: http.MethodPost, target: "/mcp", contentType: "application/json", body: toolCall(tool, args(f))}
			}})
	}
	none := func(*forum) map[string]any { return map[string]any{} }
	thread := func(f *forum) map[string]any { return map[string]any{"thread": f.thread} }
	claim := func(f *forum) map[string]any { return map[string]any{"claim": f.claim} }
	add(anonymous, R, "POST /mcp (tools/list)", func(*forum, caller) request {
		return request{method: http.MethodPost, target: "/mcp", contentType: "application/json",
			body: []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)}
	})
	out[len(out)-1].route = "POST /mcp"
	addTool(anonymous, R, "get_manifest", none)
	addTool(reader, R, "list_threads", func(*forum) map[string]any { return map[string]any{"limit": 100} })
	addTool(reader, R, "read_thread", thread)
	addTool(reader, R, "read_events", thread)
	addTool(reader, R, "inbox", func(*forum) map[string]any { return map[string]any{"limit": 100} })
	addTool(reader, R, "search", func(*forum) map[string]any { return map[string]any{"q": "limit", "limit": 100} })
	addTool(reader, R, "claim_read", claim)
	addTool(reader, R, "claim_graph", thread)
	addTool(reader, R, "identity_read", func(*forum) map[string]any { return map[string]any{"identity": "ainotes:claimant"} })
	addTool(reader, R, "list_rooms", none)
	addTool(reader, R, "artifact_get", func(f *forum) map[string]any { return map[string]any{"ref": f.artifact} })
	addTool(writer, W, "send", func(f *forum) map[string]any {
		return map[string]any{"kind": "note", "thread": f.thread, "body": strings.Repeat("n", 500)}
	})
	addTool(writer, W, "claim_assert", func(f *forum) map[string]any {
		return map[string]any{"thread": f.thread, "statement": "One claim too many.", "evidence": evidence()}
	})
	addTool(writer, W, "claim_attest", func(f *forum) map[string]any { return map[string]any{"claim": f.claim, "evidence": evidence()} })
	addTool(writer, W, "claim_refute", func(f *forum) map[string]any {
		return map[string]any{"claim": f.claim, "evidence": evidence(), "body": "It does not."}
	})
	addTool(verifier, W, "claim_verify", claim)
	addTool(locker, W, "confirm", thread)
	addTool(human, W, "mark", func(f *forum) map[string]any { return map[string]any{"thread": f.thread, "state": "answered"} })
	addTool(human, W, "thread_move", func(f *forum) map[string]any { return map[string]any{"thread": f.thread, "room": "general"} })
	addTool(locker, W, "message_hide", func(f *forum) map[string]any {
		return map[string]any{"message": f.root, "reason": "Hidden by the resource matrix."}
	})
	addTool(locker, W, "message_unhide", func(f *forum) map[string]any { return map[string]any{"message": f.root} })
	addTool(writer, W, "artifact_put", func(*forum) map[string]any {
		return map[string]any{"content_base64": base64.StdEncoding.EncodeToString(largestArtifact(caller{})), "media_type": "text/plain"}
	})
	addTool(writer, W, "key_register", func(*forum) map[string]any { return map[string]any{"public_key": newPublicKey()} })

	// The server's own.
	add(anonymous, R, "GET /healthz", get("/healthz"))
	add(anonymous, R, "GET /metrics", get("/metrics"))
	out[len(out)-1].degrades = true
	add(anonymous, R, "GET /favicon.ico", get("/favicon.ico"))
	add(anonymous, R, "GET /static/*", get("/static/vendor/htmx.min.js"))

	// The pages, read by anyone (--public-read) or by whom they are for.
	add(anonymous, R, "GET /", get("/"))
	add(anonymous, R, "GET /threads/:id", func(f *forum, _ caller) request { return get("/threads/"+f.thread)(f, caller{}) })
	add(anonymous, R, "GET /threads/:id/live", func(f *forum, _ caller) request {
		return request{method: http.MethodGet, target: "/threads/" + f.thread + "/live", stream: true}
	})
	add(anonymous, admission.Drawing, "GET /threads/:id/graph", func(f *forum, _ caller) request {
		return get("/threads/"+f.thread+"/graph")(f, caller{})
	})
	add(anonymous, admission.Drawing, "GET /graph", func(f *forum, _ caller) request { return get("/graph?thread="+f.thread)(f, caller{}) })
	add(anonymous, admission.Export, "GET /graph/export", func(f *forum, _ caller) request {
		return get("/graph/export?format=graphml&thread="+f.thread)(f, caller{})
	})
	add(anonymous, R, "GET /moderation", get("/moderation"))
	add(anonymous, R, "GET /moderation/live", func(*forum, caller) request {
		return request{method: http.MethodGet, target: "/moderation/live", stream: true}
	})
	add(anonymous, R, "GET /artifacts/:ref", func(f *forum, _ caller) request { return get("/artifacts/"+f.artifact)(f, caller{}) })
	add(anonymous, R, "GET /search", get("/search?q=limit"))
	add(anonymous, R, "GET /identities", get("/identities"))
	add(anonymous, R, "GET /identities/:identity", get("/identities/ainotes:claimant"))
	add(anonymous, R, "GET /health", get("/health"))
	add(anonymous, R, "GET /rooms/:name", get("/rooms/general"))
	add(anonymous, R, "GET /login", get("/login"))
	add(anonymous, R, "GET /setup", get("/setup"))
	add(member, R, "GET /account", get("/account"))
	add(member, R, "GET /threads/new", get("/threads/new"))
	add(adminPages, R, "GET /rooms", get("/rooms"))
	add(adminPages, R, "GET /tokens", get("/tokens"))

	// The pages' forms.
	add(anonymous, admission.Password, "POST /setup", form("/setup", url.Values{"name": {"intruder"}, "password": {thePassword}, "password2": {thePassword}}))
	add(passwordHolder, admission.Password, "POST /login", func(f *forum, c caller) request {
		return form("/login", url.Values{"name": {c.name}, "password": {thePassword}})(f, c)
	})
	add(passwordHolder, admission.Password, "POST /account/password", form("/account/password",
		url.Values{"current": {thePassword}, "password": {thePassword}, "password2": {thePassword}}))
	add(signingOut, W, "POST /logout", form("/logout", nil))
	add(signingOut, W, "POST /account/signout-everywhere", form("/account/signout-everywhere", nil))
	add(signingOut, W, "POST /account/sessions/:id/end", form("/account/sessions/1/end", nil))
	add(adminPages, W, "POST /users/:name/signout", func(f *forum, c caller) request {
		return form("/users/login-"+strconv.Itoa(c.i)+"/signout", nil)(f, c)
	})
	add(member, W, "POST /threads", form("/threads", url.Values{"title": {"Opened on a page by the matrix"}, "room": {"general"}}))
	add(member, W, "POST /threads/:id/messages", func(f *forum, c caller) request {
		return form("/threads/"+f.thread+"/messages", url.Values{"kind": {"note"}, "body": {strings.Repeat("n", 500)}})(f, c)
	})
	add(member, W, "POST /threads/:id/confirm", func(f *forum, c caller) request { return form("/threads/"+f.thread+"/confirm", nil)(f, c) })
	add(member, W, "POST /threads/:id/mark", func(f *forum, c caller) request {
		return form("/threads/"+f.thread+"/mark", url.Values{"state": {"answered"}})(f, c)
	})
	add(member, W, "POST /threads/:id/move", func(f *forum, c caller) request {
		return form("/threads/"+f.thread+"/move", url.Values{"room": {"general"}})(f, c)
	})
	add(member, W, "POST /threads/:id/messages/:msg/hide", func(f *forum, c caller) request {
		return form("/threads/"+f.thread+"/messages/"+f.root+"/hide", url.Values{"reason": {"spam"}})(f, c)
	})
	add(member, W, "POST /threads/:id/messages/:msg/unhide", func(f *forum, c caller) request {
		return form("/threads/"+f.thread+"/messages/"+f.root+"/unhide", nil)(f, c)
	})
	add(member, W, "POST /claims/:id/verify", func(f *forum, c caller) request { return form("/claims/"+f.claim+"/verify", nil)(f, c) })
	add(member, W, "POST /claims/:id/mark", func(f *forum, c caller) request {
		return form("/claims/"+f.claim+"/mark", url.Values{"state": {"unverified"}})(f, c)
	})
	add(member, W, "POST /claims/:id/confirm", func(f *forum, c caller) request { return form("/claims/"+f.claim+"/confirm", nil)(f, c) })
	add(member, W, "POST /moderation/confirm", func(f *forum, c caller) request {
		return form("/moderation/confirm", url.Values{"item": {f.thread}})(f, c)
	})
	add(member, W, "POST /rooms/move", func(f *forum, c caller) request {
		return form("/rooms/move", url.Values{"thread": {f.thread}, "room": {"general"}})(f, c)
	})
	add(adminPages, W, "POST /rooms", func(f *forum, c caller) request {
		return form("/rooms", url.Values{"name": {unique("page-room-")}, "title": {"A room"}})(f, c)
	})
	add(adminPages, W, "POST /rooms/:name", form("/rooms/elsewhere", url.Values{"title": {"Elsewhere"}, "description": {"Renamed by the matrix"}}))
	add(adminPages, W, "POST /tokens", func(f *forum, c caller) request {
		return form("/tokens", url.Values{"handle": {unique("matrix-agent-")}, "rights": {"read"}})(f, c)
	})
	add(adminPages, W, "POST /tokens/:id/revoke", func(f *forum, c caller) request {
		return form("/tokens/"+strconv.FormatInt(f.revocable[c.i], 10)+"/revoke", url.Values{"confirm": {"yes"}})(f, c)
	})
	return out
}

func get(target string) func(*forum, caller) request {
	return func(*forum, caller) request { return request{method: http.MethodGet, target: target} }
}

func jsonBody(method, target string, body map[string]any) request {
	raw, _ := json.Marshal(body)
	return request{method: method, target: target, contentType: "application/json", body: raw}
}

// form posts values with the caller's CSRF token.
func form(target string, values url.Values) func(*forum, caller) request {
	return func(_ *forum, c caller) request {
		v := url.Values{}
		for k, vs := range values {
			v[k] = vs
		}
		if c.csrf != "" {
			v.Set("csrf", c.csrf)
		}
		return request{method: http.MethodPost, target: target, contentType: "application/x-www-form-urlencoded", body: []byte(v.Encode())}
	}
}

func evidence() []any {
	return []any{map[string]any{"kind": "url", "ref": "https://example.org/" + strings.Repeat("e", 1000)}}
}

// largestArtifact is an artifact of artifact_max_bytes, another for each call (a stored one
// would be a cheap replay).
func largestArtifact(caller) []byte {
	b := bytes.Repeat([]byte("x"), protocol.DefaultLimits().ArtifactMaxBytes)
	copy(b, unique("artifact "))
	return b
}

var made atomic.Int64

func unique(prefix string) string { return prefix + strconv.FormatInt(made.Add(1), 10) }

func newPublicKey() string {
	pub, _, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		panic(err)
	}
	return base64.StdEncoding.EncodeToString(pub)
}
