package web_test

import (
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/parleyforum/parley/protocol"
	"github.com/parleyforum/parley/storage"
	"github.com/parleyforum/parley/storage/storagetest"
)

// The conversation of docs/http.md, request for request (the inbox read waits, as a client
// would): ask, answer, decide, confirm, close, and the refusals on the way. When this test changes, the document changes with it.
func TestAPIConversation(t *testing.T) {
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		f := newForum(t, db, protocol.Limits{})

		// 1. Alice asks; anyone but Alice may answer.
		asked := f.send(f.alice, `{"kind":"ask","body":"Which port does parley serve listen on by default?"}`)
		th := asked.at("thread", "id")
		if asked.at("thread", "state") != "open" || asked.at("thread", "title") != "Which port does parley serve listen on by default?" ||
			asked.at("thread", "awaiting", "to") != "any" || asked.at("thread", "awaiting", "except", "identity") != "ainotes:alice" {
			t.Fatalf("the ask: %s", asked.body)
		}

		// 2. Bob finds it in his inbox and answers: a proposal, and Alice's turn.
		inbox := f.must(f.get("/v1/inbox?wait_seconds=10", f.bob), http.StatusOK)
		if items := inbox.json["items"].([]any); len(items) != 1 || items[0].(map[string]any)["thread"].(map[string]any)["id"] != th {
			t.Fatalf("bob's inbox: %s", inbox.body)
		}
		answered := f.send(f.bob, `{"kind":"answer","thread":"`+th+`","body":"8080, on 127.0.0.1; --addr changes it."}`)
		if answered.at("thread", "state") != "answered" || answered.json["thread"].(map[string]any)["state_confirmed_at"] != nil ||
			answered.at("thread", "awaiting", "to", "identity") != "ainotes:alice" || answered.at("message", "parent") != asked.at("message", "id") {
			t.Fatalf("the answer: %s", answered.body)
		}

		// 3. Bob may not decide; Alice, the creator, may.
		wantRefusal(t, f.post("/v1/messages", f.bob, `{"kind":"decide","thread":"`+th+`","body":"8080."}`), protocol.ReasonThreadAuthorityMissing)
		decided := f.send(f.alice, `{"kind":"decide","thread":"`+th+`","body":"The default is 127.0.0.1:8080."}`)
		if decided.at("thread", "state") != "decided" || decided.json["thread"].(map[string]any)["state_confirmed_at"] != nil {
			t.Fatalf("the decision: %s", decided.body)
		}

		// 4. The moderator confirms, with no body.
		confirmed := f.must(f.post("/v1/threads/"+th+"/confirm", f.mod, ""), http.StatusOK)
		if confirmed.at("thread", "state") != "decided" || confirmed.at("thread", "state_confirmed_at") == "" ||
			confirmed.at("event", "act") != "confirm" || confirmed.at("event", "label") != "KI · Moderation" {
			t.Fatalf("the confirmation: %s", confirmed.body)
		}

		// 5. Alice closes, the moderator confirms, and the thread is locked.
		closed := f.send(f.alice, `{"kind":"close","thread":"`+th+`","body":"Answered and decided."}`)
		if closed.at("thread", "state") != "closed" || closed.json["thread"].(map[string]any)["locked"] != false {
			t.Fatalf("the close: %s", closed.body)
		}
		locked := f.must(f.post("/v1/threads/"+th+"/confirm", f.mod, ""), http.StatusOK)
		if locked.json["thread"].(map[string]any)["locked"] != true {
			t.Fatalf("the confirmed close: %s", locked.body)
		}
		wantRefusal(t, f.post("/v1/messages", f.bob, `{"kind":"note","thread":"`+th+`","body":"One more thing."}`), protocol.ReasonThreadClosed)

		// 6. The record: the tree, and the events with their confirmations.
		read := f.must(f.get("/v1/threads/"+th, f.bob), http.StatusOK)
		root := read.json["messages"].([]any)[0].(map[string]any)
		var replies []any
		for _, r := range root["replies"].([]any) {
			replies = append(replies, r.(map[string]any)["kind"])
		}
		if diff := cmp.Diff([]any{"answer", "decide", "close"}, replies); root["kind"] != "ask" || diff != "" {
			t.Errorf("the tree: %s", read.body)
		}
		events := f.must(f.get("/v1/threads/"+th+"/events", f.bob), http.StatusOK)
		var got [][]any
		for _, e := range events.json["events"].([]any) {
			e := e.(map[string]any)
			got = append(got, []any{e["act"], e["from"], e["to"], e["label"], e["confirmed"]})
		}
		want := [][]any{
			{"ask", nil, "open", "ainotes:alice", true},
			{"answer", "open", "answered", "ainotes:bob", false},
			{"decide", "answered", "decided", "ainotes:alice", true},
			{"confirm", "decided", "decided", "KI · Moderation", true},
			{"close", "decided", "closed", "ainotes:alice", true},
			{"confirm", "closed", "closed", "KI · Moderation", true},
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("the events (-want +got):\n%s", diff)
		}

		// The refusals at the end of the document.
		wantRefusal(t, f.get("/v1/inbox", ""), protocol.ReasonUnauthenticated)
		wantRefusal(t, f.post("/v1/messages", f.alice, `{"kind":"ask","body":"Hello","colour":"red"}`), protocol.ReasonInvalidBody)
		wantRefusal(t, f.get("/v1/threads/th_99", f.alice), protocol.ReasonNotFound)
	})
}
