package mcpserver_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/parleyforum/parley/protocol"
	"github.com/parleyforum/parley/storage"
	"github.com/parleyforum/parley/storage/storagetest"
)

// The shapes a client reads back, as far as these tests look.
type (
	threadOut struct {
		ID               string          `json:"id"`
		State            string          `json:"state"`
		StateConfirmedAt *string         `json:"state_confirmed_at"`
		Locked           bool            `json:"locked"`
		Awaiting         json.RawMessage `json:"awaiting"`
	}
	messageOut struct {
		ID      string       `json:"id"`
		Kind    string       `json:"kind"`
		Parent  *string      `json:"parent"`
		From    partyOut     `json:"from"`
		Body    string       `json:"body"`
		Replies []messageOut `json:"replies"`
	}
	partyOut struct {
		Identity  string `json:"identity"`
		Extension string `json:"extension"`
	}
	sendOut struct {
		Message messageOut `json:"message"`
		Thread  threadOut  `json:"thread"`
	}
	manifestOut struct {
		Parley string          `json:"parley"`
		Realm  string          `json:"realm"`
		Limits protocol.Limits `json:"limits"`
		Kinds  []struct {
			Kind string `json:"kind"`
		} `json:"kinds"`
		You *struct {
			Identity string   `json:"identity"`
			Rights   []string `json:"rights"`
		} `json:"you"`
	}
)

// A whole conversation over MCP with the Go SDK's client: the manifest with and without a
// token, ask, answer from a second token, reading, the inbox, events, confirm and mark.
func TestConversation(t *testing.T) {
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		f := newForum(t, db, protocol.Limits{})
		anon := f.connect("")
		alice := f.connect(f.token("alice", "read,write", false))
		bob := f.connect(f.token("bob", "read,write", false))
		mod := f.connect(f.token("mod", "read,write,lock", false))
		ada := f.connect(f.token("ada", "", true))

		var m manifestOut
		ok(t, anon, "get_manifest", `{}`, &m)
		if m.Parley != "1" || m.Realm != "ainotes" || len(m.Kinds) != 9 || m.Limits != protocol.DefaultLimits() || m.You != nil {
			t.Fatalf("manifest without a token: %+v", m)
		}
		ok(t, alice, "get_manifest", ``, &m) // no arguments at all is no arguments
		if m.You == nil || m.You.Identity != "ainotes:alice" {
			t.Fatalf("manifest with alice's token names her: %+v", m.You)
		}

		var asked sendOut
		ok(t, alice, "send", `{"kind":"ask","body":"Which port does the server use?","from":{"extension":"w1"}}`, &asked)
		th := asked.Thread.ID
		if asked.Thread.State != "open" || asked.Message.From != (partyOut{"ainotes:alice", "w1"}) {
			t.Fatalf("ask: %+v", asked)
		}

		var inbox struct {
			Items []struct {
				Thread  threadOut  `json:"thread"`
				Message messageOut `json:"message"`
			} `json:"items"`
			Cursor string `json:"cursor"`
		}
		ok(t, bob, "inbox", `{"wait_seconds":10}`, &inbox)
		if len(inbox.Items) != 1 || inbox.Items[0].Thread.ID != th || inbox.Items[0].Message.ID != asked.Message.ID {
			t.Fatalf("bob's inbox holds the open question: %+v", inbox)
		}

		var answered sendOut
		ok(t, bob, "send", `{"kind":"answer","thread":"`+th+`","body":"8080 by default."}`, &answered)
		if answered.Thread.State != "answered" || answered.Thread.StateConfirmedAt != nil || *answered.Message.Parent != asked.Message.ID {
			t.Fatalf("answer proposes answered, under the ask: %+v", answered)
		}
		ok(t, bob, "inbox", `{"since":"`+inbox.Cursor+`"}`, &inbox)
		if len(inbox.Items) != 0 {
			t.Fatalf("after answering, nothing is bob's: %+v", inbox)
		}
		ok(t, alice, "inbox", `{"extension":"w1","wait_seconds":10}`, &inbox)
		if len(inbox.Items) != 1 || inbox.Items[0].Message.ID != answered.Message.ID {
			t.Fatalf("alice's w1 is awaited: %+v", inbox)
		}

		var read struct {
			Thread   threadOut    `json:"thread"`
			Messages []messageOut `json:"messages"`
			Claims   []any        `json:"claims"`
		}
		ok(t, bob, "read_thread", `{"thread":"`+th+`"}`, &read)
		if len(read.Messages) != 1 || len(read.Messages[0].Replies) != 1 || read.Messages[0].Replies[0].Body != "8080 by default." || read.Claims == nil {
			t.Fatalf("read_thread: %+v", read)
		}

		var conf struct {
			Thread threadOut `json:"thread"`
			Event  struct {
				Act string `json:"act"`
			} `json:"event"`
		}
		ok(t, mod, "confirm", `{"thread":"`+th+`"}`, &conf)
		if conf.Thread.StateConfirmedAt == nil || conf.Event.Act != "confirm" {
			t.Fatalf("confirm: %+v", conf)
		}
		ok(t, ada, "mark", `{"thread":"`+th+`","state":"closed"}`, &conf)
		if !conf.Thread.Locked || conf.Event.Act != "mark" {
			t.Fatalf("a human's mark closed locks the thread: %+v", conf)
		}

		var events struct {
			Events []struct {
				Act string `json:"act"`
				To  string `json:"to"`
			} `json:"events"`
			Cursor string `json:"cursor"`
		}
		ok(t, alice, "read_events", `{"thread":"`+th+`"}`, &events)
		acts := []string{}
		for _, e := range events.Events {
			acts = append(acts, e.Act+" "+e.To)
		}
		if want := `["ask open","answer answered","confirm answered","mark closed"]`; mustJSON(t, acts) != want {
			t.Fatalf("events %s, want %s", mustJSON(t, acts), want)
		}
		ok(t, alice, "read_events", `{"thread":"`+th+`","since":"`+events.Cursor+`"}`, &events)
		if len(events.Events) != 0 {
			t.Fatalf("nothing after the cursor: %+v", events)
		}

		var list struct {
			Threads []threadOut `json:"threads"`
			More    bool        `json:"more"`
		}
		ok(t, reader(f), "list_threads", `{"state":"closed","limit":500}`, &list)
		if len(list.Threads) != 1 || list.Threads[0].ID != th || list.More {
			t.Fatalf("list_threads: %+v", list)
		}
	})
}

// reader is a reader with only the read right.
func reader(f *forum) *mcp.ClientSession { return f.connect(f.token("reader", "read", false)) }

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// The text content is the JSON a model reads: <, > and & stay as they are, as over HTTP.
func TestTextKeepsMarkup(t *testing.T) {
	f := newForum(t, storagetest.Open(t, storage.SQLite), protocol.Limits{})
	alice := f.connect(f.token("alice", "read,write", false))
	res := call(t, alice, "send", `{"kind":"ask","body":"Is <b> & </b> allowed?"}`)
	if got := text(t, res); !strings.Contains(got, `"body":"Is <b> & </b> allowed?"`) {
		t.Errorf("text content %s escapes the body", got)
	}
}
