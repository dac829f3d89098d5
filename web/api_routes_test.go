package web_test

import (
	"net"
	"net/http"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/gofiber/fiber/v2"
	"github.com/google/go-cmp/cmp"

	"github.com/parleyforum/parley/protocol"
	"github.com/parleyforum/parley/storage"
	"github.com/parleyforum/parley/storage/storagetest"
)

// Every route of § 10 answers with its result shape, in JSON, with times in RFC 3339 UTC.
func TestAPIRoutes(t *testing.T) {
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		f := newForum(t, db, protocol.Limits{})

		asked := f.send(f.alice, `{"kind":"ask","body":"Which port?","from":{"extension":"w1"}}`)
		wantKeys(t, "send", asked, "message", "thread")
		th := asked.at("thread", "id")
		bare := strings.TrimPrefix(th, "th_")
		wantTimes(t, asked.json)

		list := f.must(f.get("/v1/threads?state=open&limit=10", f.reader), http.StatusOK)
		wantKeys(t, "list threads", list, "threads", "cursor", "more")
		if threads := list.json["threads"].([]any); len(threads) != 1 || threads[0].(map[string]any)["id"] != th {
			t.Errorf("GET /v1/threads = %s", list.body)
		}
		if empty := f.must(f.get("/v1/threads?state=closed", f.reader), http.StatusOK); len(empty.json["threads"].([]any)) != 0 {
			t.Errorf("GET /v1/threads?state=closed = %s", empty.body)
		}

		for _, id := range []string{th, bare} {
			read := f.must(f.get("/v1/threads/"+id, f.reader), http.StatusOK)
			wantKeys(t, "read thread", read, "thread", "messages", "claims", "as_of")
			if read.at("thread", "id") != th {
				t.Errorf("GET /v1/threads/%s = %s", id, read.body)
			}
			wantTimes(t, read.json)
		}

		events := f.must(f.get("/v1/threads/"+th+"/events", f.reader), http.StatusOK)
		wantKeys(t, "events", events, "events", "cursor", "more")
		if evs := events.json["events"].([]any); len(evs) != 1 || evs[0].(map[string]any)["act"] != "ask" {
			t.Errorf("GET events = %s", events.body)
		}
		wantTimes(t, events.json)
		since := f.must(f.get("/v1/threads/"+bare+"/events?since="+events.at("cursor"), f.reader), http.StatusOK)
		if len(since.json["events"].([]any)) != 0 {
			t.Errorf("GET events since the last cursor = %s", since.body)
		}

		// Bob's inbox holds the open call; after his answer it is Alice's turn, on w1.
		inbox := f.must(f.get("/v1/inbox?limit=5&wait_seconds=10", f.bob), http.StatusOK)
		wantKeys(t, "inbox", inbox, "items", "cursor", "more")
		if items := inbox.json["items"].([]any); len(items) != 1 {
			t.Fatalf("bob's inbox = %s", inbox.body)
		}
		mine := f.must(f.get("/v1/inbox?extension=w1", f.alice), http.StatusOK)
		if len(mine.json["items"].([]any)) != 0 {
			t.Errorf("alice's own open call is hidden from w1: %s", mine.body)
		}
		f.send(f.bob, `{"kind":"answer","thread":"`+th+`","body":"8080."}`)
		mine = f.must(f.get("/v1/inbox?extension=w1&wait_seconds=10&since="+mine.at("cursor"), f.alice), http.StatusOK)
		items := mine.json["items"].([]any)
		if len(items) != 1 {
			t.Fatalf("alice's inbox after the answer = %s", mine.body)
		}
		item := items[0].(map[string]any)
		if cmp.Diff([]string{"awaiting", "message", "thread"}, keys(item)) != "" || item["message"].(map[string]any)["body"] != "8080." {
			t.Errorf("inbox item = %v", item)
		}
		wantTimes(t, mine.json)

		confirm := f.must(f.post("/v1/threads/"+th+"/confirm", f.mod, ""), http.StatusOK)
		wantKeys(t, "confirm", confirm, "event", "thread")
		if confirm.at("event", "act") != "confirm" || confirm.at("thread", "state_confirmed_at") == "" {
			t.Errorf("confirm = %s", confirm.body)
		}
		wantTimes(t, confirm.json)

		mark := f.must(f.post("/v1/threads/"+bare+"/mark", f.human, `{"state":"deferred"}`), http.StatusOK)
		wantKeys(t, "mark", mark, "event", "thread")
		if mark.at("thread", "state") != "deferred" || mark.at("thread", "state_origin") != "user" || mark.at("event", "act") != "mark" {
			t.Errorf("mark = %s", mark.body)
		}

		// HEAD answers as GET does, without the body.
		head := f.do(request{method: http.MethodHead, target: "/v1/threads/" + th, token: f.reader})
		if head.status != http.StatusOK || len(head.body) != 0 || !jsonContent(head) {
			t.Errorf("HEAD /v1/threads/%s = %d %v %q", th, head.status, head.header, head.body)
		}
	})
}

// The long poll of the inbox returns as soon as it is the caller's turn.
func TestAPIInboxWaits(t *testing.T) {
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		f := newForum(t, db, protocol.Limits{})
		th, _ := f.ask(f.alice, "Anyone?")
		start := f.must(f.get("/v1/inbox", f.alice), http.StatusOK)

		polled := make(chan *reply, 1)
		go func() { polled <- f.get("/v1/inbox?wait_seconds=30&since="+start.at("cursor"), f.alice) }()
		f.send(f.bob, `{"kind":"answer","thread":"`+th+`","body":"Here."}`)
		r := <-polled
		if r.status != http.StatusOK || len(r.json["items"].([]any)) != 1 {
			t.Fatalf("the long poll = %d %s, want the answered thread", r.status, r.body)
		}
	})
}

// A shutdown ends a long poll at once, with what there is, instead of waiting out its
// wait_seconds: here an hour, which would hold the test until it times out.
func TestAPIShutdownEndsLongPoll(t *testing.T) {
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		limits := protocol.DefaultLimits()
		limits.InboxMaxWaitSeconds = 3600
		reading := make(chan struct{})
		var once sync.Once
		f := newForum(t, db, limits, func(app *fiber.App) {
			onConnState(&app.Server().ConnState, "active", func() { once.Do(func() { close(reading) }) })
		})
		polled := make(chan *reply, 1)
		go func() { polled <- f.get("/v1/inbox?wait_seconds=3600", f.alice) }()
		<-reading // the server has the request: a shutdown now lets it finish
		if err := f.app.Shutdown(); err != nil {
			t.Fatal(err)
		}
		r := <-polled
		if r.status != http.StatusOK || len(r.json["items"].([]any)) != 0 || r.at("cursor") == "" {
			t.Errorf("the long poll cut short by the shutdown = %d %s, want its empty answer", r.status, r.body)
		}
	})
}

// onConnState calls fn whenever the server's connections enter the named state
// ("active": a request is being read). It sets fasthttp's hook through its type alone.
func onConnState[S interface {
	~int
	String() string
}](hook *func(net.Conn, S), state string, fn func()) {
	*hook = func(_ net.Conn, s S) {
		if s.String() == state {
			fn()
		}
	}
}

// The manifest needs no token; with a valid one it says who you are; a token that is sent
// must be valid, on the manifest as everywhere.
func TestAPIManifest(t *testing.T) {
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		limits := protocol.DefaultLimits()
		limits.WritesPerMinute = 7
		f := newForum(t, db, limits)

		anon := f.must(f.get("/v1/manifest", ""), http.StatusOK)
		if _, has := anon.json["you"]; has || anon.json["parley"] != "1" || anon.at("transports", "http") != "/v1" {
			t.Errorf("GET /v1/manifest without a token = %s", anon.body)
		}
		if got := anon.json["limits"].(map[string]any)["writes_per_minute"]; got != float64(7) {
			t.Errorf("the manifest shows writes_per_minute %v, want the 7 in force", got)
		}
		wellKnown := f.must(f.get("/.well-known/parley", ""), http.StatusOK)
		if diff := cmp.Diff(anon.json, wellKnown.json); diff != "" {
			t.Errorf("/.well-known/parley differs from /v1/manifest (-manifest +well-known):\n%s", diff)
		}

		for _, c := range []struct {
			token, identity string
			rights          []any
			label           any
		}{
			{f.alice, "ainotes:alice", []any{"read", "write"}, nil},
			{f.mod, "ainotes:mod", []any{"read", "write", "lock"}, "Moderation"},
			{f.human, "human:ann", []any{"read", "write", "lock", "verify"}, nil},
		} {
			you, _ := f.must(f.get("/v1/manifest", c.token), http.StatusOK).json["you"].(map[string]any)
			if you["identity"] != c.identity || cmp.Diff(c.rights, you["rights"]) != "" || you["label"] != c.label {
				t.Errorf("you = %v, want %s %v %v", you, c.identity, c.rights, c.label)
			}
		}

		revoked := f.token("ainotes:gone", false, "read", nil)
		tokens, err := db.Tokens(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if err := db.RevokeToken(t.Context(), tokens[len(tokens)-1].ID); err != nil {
			t.Fatal(err)
		}
		for name, header := range map[string]string{
			"unknown token":   "Bearer parley_unknown",
			"revoked token":   "Bearer " + revoked,
			"other scheme":    "Basic YWxpY2U6c2VjcmV0",
			"no secret":       "Bearer",
			"two words":       "Bearer " + f.alice + " extra",
			"secret, scheme?": f.alice,
		} {
			for _, target := range []string{"/v1/manifest", "/.well-known/parley"} {
				r := f.do(request{method: http.MethodGet, target: target, header: map[string]string{"Authorization": header}})
				if r.status != http.StatusUnauthorized || r.reason() != "unauthenticated" || r.header.Get("WWW-Authenticate") == "" {
					t.Errorf("%s on %s = %d %v %s, want 401 unauthenticated", name, target, r.status, r.header, r.body)
				}
			}
		}
		// The scheme is case-insensitive.
		if r := f.do(request{method: http.MethodGet, target: "/v1/manifest", header: map[string]string{"Authorization": "bearer " + f.alice}}); r.at("you", "identity") != "ainotes:alice" {
			t.Errorf("a lower-case bearer scheme = %d %s", r.status, r.body)
		}
	})
}

// wantKeys checks the top-level fields of a result shape (§ 10).
func wantKeys(t *testing.T, what string, r *reply, want ...string) {
	t.Helper()
	sort.Strings(want)
	if diff := cmp.Diff(want, keys(r.json)); diff != "" {
		t.Errorf("%s: fields (-want +got):\n%s\n%s", what, diff, r.body)
	}
	if !jsonContent(r) {
		t.Errorf("%s: Content-Type %q, want application/json; charset=utf-8", what, r.header.Get("Content-Type"))
	}
}

func jsonContent(r *reply) bool {
	return r.header.Get("Content-Type") == "application/json; charset=utf-8"
}

func keys(m map[string]any) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// rfc3339UTC is a time as the protocol writes them: UTC, at most microseconds.
var rfc3339UTC = regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{1,6})?Z$`)

// timeFields are the fields of § 2, § 5 and § 7 that hold times.
var timeFields = map[string]bool{"created_at": true, "updated_at": true, "state_confirmed_at": true, "confirmed_at": true, "at": true}

// wantTimes checks every time anywhere in v, and that there is at least one.
func wantTimes(t *testing.T, v any) {
	t.Helper()
	seen := 0
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, x := range v {
				if s, ok := x.(string); ok && timeFields[k] {
					seen++
					if !rfc3339UTC.MatchString(s) {
						t.Errorf("%s = %q is not RFC 3339 UTC with at most microseconds", k, s)
					}
				}
				walk(x)
			}
		case []any:
			for _, x := range v {
				walk(x)
			}
		}
	}
	walk(v)
	if seen == 0 {
		t.Errorf("no time found in %v", v)
	}
}
