package web_test

import (
	"net/http"
	"net/url"
	"testing"

	"github.com/parleyforum/parley/protocol"
	"github.com/parleyforum/parley/storage"
	"github.com/parleyforum/parley/storage/storagetest"
)

// GET /v1/search finds a message as soon as its send is answered 201, takes its filters as
// query parameters, and refuses as § 9 says.
func TestSearchOverHTTP(t *testing.T) {
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		f := newForum(t, db, protocol.Limits{})
		th, msg := f.ask(f.alice, `Which "port" does parley serve listen on by default?`)
		q := "/v1/search?" + url.Values{"q": {`"listen on" port`}, "author": {"ainotes:alice"}, "thread": {th}}.Encode()
		r := f.must(f.get(q, f.reader), http.StatusOK)
		results, _ := r.json["results"].([]any)
		if len(results) != 1 || r.json["more"] != false || r.json["cursor"] != nil {
			t.Fatalf("search: %s", r.body)
		}
		hit, _ := results[0].(map[string]any)
		found := &reply{json: hit}
		if found.at("message", "id") != msg || found.at("thread", "id") != th || found.at("thread", "state") != "open" ||
			found.at("snippet") != `Which "port" does parley serve listen on by default?` {
			t.Errorf("hit: %s", r.body)
		}
		if r := f.get("/v1/search?q=-port", f.reader); r.status != http.StatusBadRequest || r.reason() != "invalid_body" {
			t.Errorf("no word: %d %s", r.status, r.body)
		}
		if r := f.get("/v1/search?q=port", ""); r.status != http.StatusUnauthorized {
			t.Errorf("no token: %d %s", r.status, r.body)
		}
		if r := f.post("/v1/search?q=port", f.reader, ""); r.status != http.StatusMethodNotAllowed {
			t.Errorf("POST: %d %s", r.status, r.body)
		}
	})
}
