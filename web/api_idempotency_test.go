package web_test

import (
	"bytes"
	"net/http"
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
