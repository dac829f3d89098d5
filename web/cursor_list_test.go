package web_test

import (
	"context"
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

// § 19 "Cursors belong to their list", over HTTP, MCP and the pages: a cursor of one thread's
// events, one query, one state's threads, one caller's inbox or ranking is refused on another
// (400 invalid_body, saying so), and taken on its own list.
func TestCursorsOfAnotherListAreRefused(t *testing.T) {
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		f := newSite(t, db, web.Options{})
		f.account("ada", false)
		one, _ := f.ask(f.alice, `{"kind":"ask","body":"a word to find, once","to":{"identity":"ainotes:bob"}}`)
		two, _ := f.ask(f.alice, `{"kind":"ask","body":"a word to find, twice","to":{"identity":"ainotes:bob"}}`)
		f.must(f.send(f.bob, `{"kind":"answer","thread":"`+one+`","body":"an answer, so that two identities rank"}`), http.StatusCreated)
		q := url.QueryEscape
		events := f.must(f.get("/v1/threads/"+one+"/events", f.bob), http.StatusOK).at("cursor")
		search := f.must(f.get("/v1/search?q=word&limit=1", f.bob), http.StatusOK).at("cursor")
		threads := f.must(f.get("/v1/threads?limit=1", f.bob), http.StatusOK).at("cursor")
		inbox := f.must(f.get("/v1/inbox?limit=1", f.bob), http.StatusOK).at("cursor")
		ranking := f.must(f.get("/v1/identities?limit=1", f.bob), http.StatusOK).at("cursor")
		for _, c := range []string{events, search, threads, inbox, ranking} {
			if c == "" {
				t.Fatalf("a list gave no cursor: %q %q %q %q %q", events, search, threads, inbox, ranking)
			}
		}

		for _, tc := range []struct {
			target, token string
			ok            bool
		}{
			{"/v1/threads/" + one + "/events?since=" + q(events), f.bob, true},
			{"/v1/threads/" + two + "/events?since=" + q(events), f.bob, false},
			{"/v1/threads/" + one + "/events?since=" + q(events), f.alice, false},
			{"/v1/search?q=word&limit=1&cursor=" + q(search), f.bob, true},
			{"/v1/search?q=find&limit=1&cursor=" + q(search), f.bob, false},
			{"/v1/search?q=word&state=open&limit=1&cursor=" + q(search), f.bob, false},
			{"/v1/threads?limit=1&cursor=" + q(threads), f.bob, true},
			{"/v1/threads?state=open&limit=1&cursor=" + q(threads), f.bob, false},
			{"/v1/threads?room=general&limit=1&cursor=" + q(threads), f.bob, false},
			{"/v1/inbox?limit=1&since=" + q(inbox), f.bob, true},
			{"/v1/inbox?limit=1&since=" + q(inbox), f.alice, false},
			{"/v1/inbox?room=general&limit=1&since=" + q(inbox), f.bob, false},
			{"/v1/identities?limit=1&cursor=" + q(ranking), f.bob, true},
			{"/v1/identities?limit=1&cursor=" + q(ranking), f.reader, false},
		} {
			r := f.get(tc.target, tc.token)
			switch {
			case tc.ok && r.status != http.StatusOK:
				t.Errorf("GET %s on its own list: %d %s", tc.target, r.status, r.body)
			case !tc.ok && (r.status != http.StatusBadRequest || r.reason() != string(protocol.ReasonInvalidBody) ||
				!strings.Contains(r.at("message"), "another list")):
				t.Errorf("GET %s on another list: %d %s, want 400 invalid_body naming another list", tc.target, r.status, r.body)
			}
		}

		cs := f.mcp(f.bob)
		for _, tc := range []struct {
			tool, args string
			ok         bool
		}{
			{"read_events", `{"thread":"` + one + `","since":` + quote(events) + `}`, true},
			{"read_events", `{"thread":"` + two + `","since":` + quote(events) + `}`, false},
			{"search", `{"q":"word","limit":1,"cursor":` + quote(search) + `}`, true},
			{"search", `{"q":"twice","limit":1,"cursor":` + quote(search) + `}`, false},
			{"list_threads", `{"limit":1,"cursor":` + quote(threads) + `}`, true},
			{"list_threads", `{"state":"open","limit":1,"cursor":` + quote(threads) + `}`, false},
			{"inbox", `{"limit":1,"since":` + quote(inbox) + `}`, true},
			{"inbox", `{"limit":1,"extension":"w2","since":` + quote(inbox) + `}`, false},
		} {
			res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tc.tool, Arguments: json.RawMessage(tc.args)})
			if err != nil {
				t.Fatalf("%s: %v", tc.tool, err)
			}
			out, _ := res.StructuredContent.(map[string]any)
			message, _ := out["message"].(string)
			switch {
			case tc.ok && res.IsError:
				t.Errorf("MCP %s %s on its own list: %+v", tc.tool, tc.args, out)
			case !tc.ok && (!res.IsError || out["reason"] != string(protocol.ReasonInvalidBody) || !strings.Contains(message, "another list")):
				t.Errorf("MCP %s %s on another list: %+v, want invalid_body naming another list", tc.tool, tc.args, out)
			}
		}

		// The pages read as their reader: an agent's cursor is not a cursor of ada's lists.
		ada := f.signedIn(t, "ada")
		if status := ada.get("/search?q=word&cursor=" + q(search)).status; status != http.StatusBadRequest {
			t.Errorf("the search page takes bob's cursor: %d, want 400", status)
		}
	})
}
