package web_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/parleyforum/parley/protocol"
	"github.com/parleyforum/parley/storage"
	"github.com/parleyforum/parley/storage/storagetest"
	"github.com/parleyforum/parley/web"
)

// unsigned is a cursor of the form servers handed out before cursors were signed: its tag and
// numbers, base64url. A client can make one up for any place it likes.
func unsigned(payload string) string { return base64.RawURLEncoding.EncodeToString([]byte(payload)) }

// tampered is a real cursor with one bit of its payload changed, its signature kept.
func tampered(t *testing.T, cursor string) string {
	t.Helper()
	raw, err := base64.RawURLEncoding.DecodeString(cursor)
	if err != nil || len(raw) < 20 {
		t.Fatalf("%q is not a signed cursor", cursor)
	}
	raw[3] ^= 1
	return base64.RawURLEncoding.EncodeToString(raw)
}

// Every operation that takes a cursor refuses one the server never gave, as invalid_body,
// over HTTP, over MCP and on the pages: cursors made up in the old unsigned form (the
// Last-Event-ID of issue 22 among them), and real cursors with a changed number.
func TestCursorsTheServerNeverIssued(t *testing.T) {
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		f := newSite(t, db, web.Options{})
		f.account("ada", true)
		thread, _ := f.ask(f.alice, `{"kind":"ask","body":"a word to find","to":{"identity":"ainotes:bob"}}`)
		inbox := f.must(f.get("/v1/inbox", f.bob), http.StatusOK).at("cursor")
		events := f.must(f.get("/v1/threads/"+thread+"/events", f.bob), http.StatusOK).at("cursor")
		forged := map[string][]string{
			"feed":      {unsigned("f1.0.999999999"), unsigned("f1.1.0")},
			"inbox":     {unsigned("i1.0.999999999"), tampered(t, inbox), events},
			"events":    {unsigned("e1.999999999"), tampered(t, events), inbox},
			"threads":   {unsigned("t1.999999999")},
			"activity":  {unsigned("a1.0.999999999")},
			"attention": {unsigned("n1.0.0.999999999")},
			"search":    {unsigned("s1.0.0.999999999")},
			"ranking":   {unsigned(`{"o":"reliability","a":"ainotes:alice"}`), unsigned(`{"o":"activity","a":"ainotes:alice"}`)},
			"proposals": {unsigned("p1.999999999")},
			"awaiting":  {unsigned("v1.999999999")},
		}
		q := url.QueryEscape
		api := []struct {
			cursors string
			target  func(c string) (string, map[string]string)
		}{
			{"feed", func(c string) (string, map[string]string) { return "/v1/feed?since=" + q(c), nil }},
			{"feed", func(c string) (string, map[string]string) {
				return "/v1/feed", map[string]string{"Last-Event-ID": c}
			}},
			{"feed", func(c string) (string, map[string]string) { return "/v1/feed?thread=" + thread + "&since=" + q(c), nil }},
			{"inbox", func(c string) (string, map[string]string) { return "/v1/inbox?since=" + q(c), nil }},
			{"inbox", func(c string) (string, map[string]string) { return "/v1/inbox?wait_seconds=5&since=" + q(c), nil }},
			{"events", func(c string) (string, map[string]string) {
				return "/v1/threads/" + thread + "/events?since=" + q(c), nil
			}},
			{"threads", func(c string) (string, map[string]string) { return "/v1/threads?cursor=" + q(c), nil }},
			{"attention", func(c string) (string, map[string]string) { return "/v1/threads?order=attention&cursor=" + q(c), nil }},
			{"search", func(c string) (string, map[string]string) { return "/v1/search?q=word&cursor=" + q(c), nil }},
			{"ranking", func(c string) (string, map[string]string) { return "/v1/identities?cursor=" + q(c), nil }},
			{"ranking", func(c string) (string, map[string]string) { return "/v1/identities?order=activity&cursor=" + q(c), nil }},
		}
		for _, row := range api {
			for _, c := range forged[row.cursors] {
				target, header := row.target(c)
				r := f.do(request{method: http.MethodGet, target: target, token: f.bob, header: header})
				if r.status != http.StatusBadRequest || r.reason() != string(protocol.ReasonInvalidBody) {
					t.Errorf("GET %s %v: %d %s, want 400 invalid_body", target, header, r.status, r.body)
				}
			}
		}

		cs := f.mcp(f.bob)
		tools := []struct {
			cursors, tool string
			args          func(c string) string
		}{
			{"threads", "list_threads", func(c string) string { return `{"cursor":` + quote(c) + `}` }},
			{"attention", "list_threads", func(c string) string { return `{"order":"attention","cursor":` + quote(c) + `}` }},
			{"events", "read_events", func(c string) string { return `{"thread":"` + thread + `","since":` + quote(c) + `}` }},
			{"inbox", "inbox", func(c string) string { return `{"since":` + quote(c) + `}` }},
			{"inbox", "inbox", func(c string) string { return `{"wait_seconds":5,"since":` + quote(c) + `}` }},
			{"search", "search", func(c string) string { return `{"q":"word","cursor":` + quote(c) + `}` }},
		}
		for _, row := range tools {
			for _, c := range forged[row.cursors] {
				res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: row.tool, Arguments: json.RawMessage(row.args(c))})
				if err != nil {
					t.Fatalf("%s: %v", row.tool, err)
				}
				out, _ := res.StructuredContent.(map[string]any)
				if !res.IsError || out["reason"] != string(protocol.ReasonInvalidBody) {
					t.Errorf("MCP %s %s: %+v, want invalid_body", row.tool, row.args(c), res.StructuredContent)
				}
			}
		}

		ada := f.signedIn(t, "ada")
		pages := []struct {
			cursors string
			target  func(c string) string
		}{
			{"activity", func(c string) string { return "/?cursor=" + q(c) }},
			{"attention", func(c string) string { return "/?order=attention&cursor=" + q(c) }},
			{"search", func(c string) string { return "/search?q=word&cursor=" + q(c) }},
			{"ranking", func(c string) string { return "/identities?cursor=" + q(c) }},
			{"proposals", func(c string) string { return "/moderation?cursor=" + q(c) }},
			{"awaiting", func(c string) string { return "/moderation?claims=" + q(c) }},
		}
		for _, row := range pages {
			for _, c := range forged[row.cursors] {
				// A page refuses as it did a malformed cursor: 400, or the 404 page of a list
				// that is not there.
				if status := ada.get(row.target(c)).status; status != http.StatusBadRequest && status != http.StatusNotFound {
					t.Errorf("GET %s: %d, want it refused", row.target(c), status)
				}
			}
		}
	})
}

// The cursor key is one per database: two servers on one database accept each other's
// cursors, and it is kept where every instance reads it.
func TestCursorKeyIsSharedByInstances(t *testing.T) {
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		one, two := newSite(t, db, web.Options{}), newSite(t, db, web.Options{})
		cursor := one.must(one.get("/v1/inbox", one.bob), http.StatusOK).at("cursor")
		if r := two.get("/v1/inbox?since="+url.QueryEscape(cursor), one.bob); r.status != http.StatusOK {
			t.Errorf("another instance refuses a cursor of the first: %d %s", r.status, r.body)
		}
		key, err := db.Setting(context.Background(), storage.SettingCursorKey)
		if err != nil || len(strings.TrimSpace(key)) < 40 {
			t.Errorf("the cursor key in the database: %q, %v", key, err)
		}
	})
}
