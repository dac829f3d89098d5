package mcpserver_test

import (
	"testing"

	"github.com/parleyforum/parley/protocol"
	"github.com/parleyforum/parley/storage"
	"github.com/parleyforum/parley/storage/storagetest"
)

// § 13 Search over MCP: the tool finds what was sent, pages with its cursor, and refuses as
// the operation does.
func TestSearchTool(t *testing.T) {
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		f := newForum(t, db, protocol.Limits{})
		alice := f.connect(f.token("alice", "read,write", false))
		bob := f.connect(f.token("bob", "read,write", false))

		var asked, answered struct {
			Message struct{ ID string } `json:"message"`
			Thread  struct{ ID string } `json:"thread"`
		}
		ok(t, alice, "send", `{"kind":"ask","body":"Which port does parley serve listen on by default?"}`, &asked)
		ok(t, bob, "send", `{"kind":"answer","thread":"`+asked.Thread.ID+`","body":"8080, on the loopback interface."}`, &answered)

		var found struct {
			Results []struct {
				Message struct{ ID, Body string } `json:"message"`
				Thread  struct{ ID, Title, State string }
				Snippet string
			} `json:"results"`
			Cursor *string `json:"cursor"`
			More   bool    `json:"more"`
		}
		ok(t, bob, "search", `{"q":"loopback"}`, &found)
		if len(found.Results) != 1 || found.Results[0].Message.ID != answered.Message.ID ||
			found.Results[0].Thread.ID != asked.Thread.ID || found.Results[0].Thread.State != "answered" ||
			found.Results[0].Snippet != "8080, on the loopback interface." || found.More || found.Cursor != nil {
			t.Fatalf("search loopback: %+v", found)
		}

		ok(t, bob, "search", `{"q":"port* -loopback","limit":1}`, &found)
		if len(found.Results) != 1 || found.Results[0].Message.ID != asked.Message.ID || found.More {
			t.Fatalf("search port* -loopback: %+v", found)
		}
		ok(t, bob, "search", `{"q":"on","limit":1,"parley":"1"}`, &found)
		if len(found.Results) != 1 || !found.More || found.Cursor == nil {
			t.Fatalf("first page: %+v", found)
		}
		first := found.Results[0].Message.ID
		ok(t, bob, "search", `{"q":"on","limit":1,"cursor":"`+*found.Cursor+`"}`, &found)
		if len(found.Results) != 1 || found.Results[0].Message.ID == first || found.More {
			t.Fatalf("second page: %+v", found)
		}

		for _, args := range []string{`{}`, `{"q":"-port"}`, `{"q":"port","kind":"chat"}`, `{"q":"port","order":"new"}`} {
			if r := refused(t, bob, "search", args); r.Reason != "invalid_body" {
				t.Errorf("search %s: %s, want invalid_body", args, r.Reason)
			}
		}
		if r := refused(t, f.connect(""), "search", `{"q":"port"}`); r.Reason != "unauthenticated" {
			t.Errorf("search without a token: %s", r.Reason)
		}
	})
}
