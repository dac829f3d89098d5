package mcpserver_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/parleyforum/parley/protocol"
	"github.com/parleyforum/parley/storage"
	"github.com/parleyforum/parley/storage/storagetest"
)

// TestIdempotencyKeyOverMCP: every write tool takes idempotency_key; a retry answers the
// first result and writes nothing; another input is idempotency_conflict; a malformed key is
// invalid_body.
func TestIdempotencyKeyOverMCP(t *testing.T) {
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		f := newForum(t, db, protocol.Limits{})
		alice, bob := f.connect(f.token("alice", "read,write", false)), f.connect(f.token("bob", "read,write", false))
		var opened struct {
			Thread struct{ ID string } `json:"thread"`
		}
		ok(t, alice, "send", `{"kind":"ask","body":"Which limit applies?"}`, &opened)
		th := opened.Thread.ID
		args := `{"kind":"answer","thread":"` + th + `","body":"The thread's.","idempotency_key":"k1"}`
		first := call(t, bob, "send", args)
		again := call(t, bob, "send", `{"idempotency_key":"k1","body":"The thread's.","kind":"answer","thread":"`+th+`"}`)
		if first.IsError || again.IsError {
			t.Fatalf("send: %s / %s", text(t, first), text(t, again))
		}
		if text(t, first) != text(t, again) {
			t.Errorf("the replay answers\n%s\nthe first answer was\n%s", text(t, again), text(t, first))
		}
		if r := refused(t, bob, "send", strings.Replace(args, "The thread's.", "Other.", 1)); r.Reason != "idempotency_conflict" || r.Status != 422 {
			t.Errorf("another input: %+v", r)
		}
		if r := refused(t, bob, "send", strings.Replace(args, `"k1"`, `"k 1"`, 1)); r.Reason != "invalid_body" {
			t.Errorf("a malformed key: %+v", r)
		}
		if r := refused(t, bob, "send", strings.Replace(args, `"k1"`, `7`, 1)); r.Reason != "invalid_body" {
			t.Errorf("a key that is no string: %+v", r)
		}
		// A read tool takes no key.
		if r := refused(t, bob, "read_thread", `{"thread":"`+th+`","idempotency_key":"k2"}`); r.Reason != "invalid_body" {
			t.Errorf("a key on a read: %+v", r)
		}
		var read struct {
			Thread struct {
				MessageCount int `json:"message_count"`
			} `json:"thread"`
		}
		ok(t, bob, "read_thread", `{"thread":"`+th+`"}`, &read)
		if read.Thread.MessageCount != 2 {
			t.Errorf("message_count %d after a retried answer, want 2", read.Thread.MessageCount)
		}
		// Every write tool announces the key; no read tool does.
		tools, err := bob.ListTools(t.Context(), nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, tool := range tools.Tools {
			raw, _ := json.Marshal(tool.InputSchema)
			has := strings.Contains(string(raw), `"idempotency_key"`)
			if has == tool.Annotations.ReadOnlyHint {
				t.Errorf("tool %s (read-only %v) announces idempotency_key: %v", tool.Name, tool.Annotations.ReadOnlyHint, has)
			}
		}
	})
}
