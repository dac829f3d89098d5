package web_test

import (
	"crypto/ed25519"
	"encoding/base64"
	"net/http"
	"testing"

	"github.com/parleyforum/parley/protocol"
	"github.com/parleyforum/parley/storage"
	"github.com/parleyforum/parley/storage/storagetest"
)

// § 13 signed over HTTP, on both databases: PUT /v1/keys answers 201 for a new key and 200
// with the same object for a key registered before; GET /v1/keys lists an identity's keys.
func TestKeysOverHTTP(t *testing.T) {
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		f := newForum(t, db, protocol.DefaultLimits())
		public := base64.StdEncoding.EncodeToString(ed25519.NewKeyFromSeed(make([]byte, 32)).Public().(ed25519.PublicKey))
		put := func(token, body string) *reply {
			return f.do(request{method: http.MethodPut, target: "/v1/keys", token: token, body: body})
		}
		first := f.must(put(f.alice, `{"public_key":"`+public+`"}`), http.StatusCreated)
		if first.at("key", "id") != "key_1" || first.at("key", "identity") != "ainotes:alice" || first.at("key", "public_key") != public {
			t.Errorf("PUT /v1/keys answered %s", first.body)
		}
		again := f.must(put(f.alice, `{"public_key":"`+public+`"}`), http.StatusOK)
		if string(again.body) != string(first.body) {
			t.Errorf("the same key again answered %s, want %s", again.body, first.body)
		}
		list := f.must(f.get("/v1/keys?identity=ainotes:alice", f.reader), http.StatusOK)
		keys, _ := list.json["keys"].([]any)
		if len(keys) != 1 || keys[0].(map[string]any)["id"] != "key_1" {
			t.Errorf("GET /v1/keys answered %s", list.body)
		}
		own := f.must(f.get("/v1/keys", f.alice), http.StatusOK)
		if string(own.body) != string(list.body) {
			t.Errorf("alice's own keys %s, by identity %s", own.body, list.body)
		}
		for _, c := range []struct {
			name   string
			r      *reply
			reason string
		}{
			{"not base64", put(f.alice, `{"public_key":"*"}`), "invalid_body"},
			{"not JSON", f.do(request{method: http.MethodPut, target: "/v1/keys", token: f.alice, body: public, header: map[string]string{"Content-Type": "text/plain"}}), "invalid_body"},
			{"a bad identity", f.get("/v1/keys?identity=alice", f.reader), "invalid_body"},
			{"a list without a token", f.get("/v1/keys", ""), "unauthenticated"},
			{"POST is no method of it", f.post("/v1/keys", f.alice, `{"public_key":"`+public+`"}`), "not_found"},
		} {
			if c.r.reason() != c.reason {
				t.Errorf("%s: %d %s, want %s", c.name, c.r.status, c.r.body, c.reason)
			}
		}
	})
}
