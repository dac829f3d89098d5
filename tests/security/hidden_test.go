package security

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/parleyforum/parley/protocol"
	"github.com/parleyforum/parley/storage"
	"github.com/parleyforum/parley/storage/storagetest"
)

// PROTOCOL.md § 18: nothing of a hidden message's text reaches a token by another road. The
// thread of each case opens with a message whose first line — the thread's title — holds
// titleSecret, and a human hides that message with a reason written for humans, quoting
// reasonSecret. Then every road a token has is taken, each over HTTP and over MCP where a tool
// serves it: every operation of the matrix (its answers to writes too), the feed, and every
// export format. No answer carries either secret; an answer that carries the thread gives its
// title null and title_hidden true. A reason the hider made public reaches the tokens.
// Unhiding the opening message gives the title back on every road that carries it. Both
// databases.
const (
	titleSecret  = "Zebrafish-4711"
	reasonSecret = "Okapi-0815"
	publicReason = "Giraffe-public"
)

// hiddenRoad is one road a token reads a thread by.
type hiddenRoad struct {
	name string // the road, as the failures name it
	op   string // the operation of operations() that serves it
	as   string // the caller of the cast
	// carries: the answer holds the thread itself (its title); every answer is scanned.
	carries bool
	// fresh: the road writes, and takes a thread of its own each time, prepared deferred
	// (a proposal to confirm) when it confirms.
	fresh bool
	input func(h hiddenCase) map[string]any
}

// hiddenCase is a thread whose opening message is hidden, with a visible note on it (what
// search finds), a claim attested by another identity, and a note hidden with a public
// reason.
type hiddenCase struct {
	fixture
	note, publicNote string
}

// roadsWithoutThreadText are the operations no road above takes, and why none of their
// answers can carry a thread's text; a new operation must be put in one of the two lists.
var roadsWithoutThreadText = map[string]string{
	"send ask":                      "opens a thread of its own, nothing of another",
	"send decide":                   "answers as send note does: the kind moves the state, not the view",
	"send close":                    "as send decide",
	"send defer":                    "as send decide",
	"send reject":                   "as send decide",
	"send obsolete":                 "as send decide",
	"send reopen":                   "as send decide",
	"message_hide (already hidden)": "a refusal",
	"message_unhide (visible)":      "a refusal",
	"artifact_put":                  "an artifact and its ref",
	"artifact_get":                  "an artifact",
	"key_register":                  "a key",
	"list keys":                     "keys",
	"schema":                        "a schema",
	"create room":                   "a room",
	"update room":                   "a room",
	"import":                        "counts of what was imported",
}

func hiddenRoads() []hiddenRoad {
	thread := func(h hiddenCase) map[string]any { return map[string]any{"thread": h.thread} }
	claim := func(h hiddenCase) map[string]any { return map[string]any{"claim": h.claim} }
	none := func(hiddenCase) map[string]any { return map[string]any{} }
	export := func(format string) func(hiddenCase) map[string]any {
		return func(hiddenCase) map[string]any { return map[string]any{"format": format} }
	}
	return []hiddenRoad{
		{name: "read_thread", op: "read_thread", as: "read-only", carries: true, input: thread},
		{name: "read_events", op: "read_events", as: "read-only", input: thread},
		{name: "list_threads", op: "list_threads", as: "read-only", carries: true,
			input: func(hiddenCase) map[string]any { return map[string]any{"limit": 100} }},
		{name: "list_threads by attention", op: "list_threads", as: "read-only", carries: true,
			input: func(hiddenCase) map[string]any { return map[string]any{"order": "attention", "limit": 100} }},
		{name: "inbox", op: "inbox", as: "read-only", carries: true,
			input: func(hiddenCase) map[string]any { return map[string]any{"limit": 100} }},
		{name: "search", op: "search", as: "read-only", carries: true,
			input: func(h hiddenCase) map[string]any { return map[string]any{"q": "listens", "thread": h.thread} }},
		{name: "claim_read", op: "claim_read", as: "read-only", input: claim},
		{name: "claim_graph", op: "claim_graph", as: "read-only", input: thread},
		{name: "identity_read", op: "identity_read", as: "read-only",
			input: func(hiddenCase) map[string]any { return map[string]any{"identity": "ainotes:agent"} }},
		{name: "list_rooms", op: "list_rooms", as: "read-only", input: none},
		{name: "get_manifest", op: "get_manifest", as: "read-only", input: none},
		{name: "export json", op: "export", as: "read-only", carries: true, input: export("json")},
		{name: "export jsonl", op: "export", as: "read-only", carries: true, input: export("jsonl")},
		{name: "export graphml", op: "export", as: "read-only", input: export("graphml")},
		{name: "export dot", op: "export", as: "read-only", input: export("dot")},
		{name: "export aif", op: "export", as: "read-only", input: export("aif")},
		{name: "feed", op: "feed", as: "read-only", input: none},
		// The answers to writes.
		{name: "send note", op: "send note", as: "writer", carries: true, fresh: true,
			input: func(h hiddenCase) map[string]any {
				return map[string]any{"kind": "note", "thread": h.thread, "parent": h.note, "body": "A note on the hidden thread."}
			}},
		{name: "send answer", op: "send answer", as: "writer", carries: true, fresh: true,
			input: func(h hiddenCase) map[string]any {
				return map[string]any{"kind": "answer", "thread": h.thread, "body": "An answer on the hidden thread."}
			}},
		{name: "confirm", op: "confirm", as: "lock holder", carries: true, fresh: true, input: thread},
		{name: "mark", op: "mark", as: "human", carries: true, fresh: true,
			input: func(h hiddenCase) map[string]any { return map[string]any{"thread": h.thread, "state": "decided"} }},
		{name: "thread_move", op: "thread_move", as: "human", carries: true, fresh: true,
			input: func(h hiddenCase) map[string]any { return map[string]any{"thread": h.thread, "room": otherRoom} }},
		{name: "claim_assert", op: "claim_assert", as: "writer", fresh: true,
			input: func(h hiddenCase) map[string]any {
				return map[string]any{"thread": h.thread, "statement": "Another claim.", "evidence": evidence("a test")}
			}},
		{name: "claim_attest", op: "claim_attest", as: "writer", fresh: true,
			input: func(h hiddenCase) map[string]any {
				return map[string]any{"claim": h.claim, "evidence": evidence("seen")}
			}},
		{name: "claim_refute", op: "claim_refute", as: "writer", fresh: true,
			input: func(h hiddenCase) map[string]any {
				return map[string]any{"claim": h.claim, "evidence": evidence("port 9090 in the log"), "body": "It listens on 9090."}
			}},
		{name: "claim_verify", op: "claim_verify", as: "verifier", fresh: true, input: claim},
		{name: "claim mark", op: "claim mark", as: "human", fresh: true,
			input: func(h hiddenCase) map[string]any { return map[string]any{"claim": h.claim, "state": "refuted"} }},
		{name: "message_hide", op: "message_hide", as: "lock holder", fresh: true,
			input: func(h hiddenCase) map[string]any {
				return map[string]any{"message": h.note, "reason": "Quoting " + reasonSecret + " again."}
			}},
		{name: "message_unhide", op: "message_unhide", as: "lock holder", fresh: true,
			input: func(h hiddenCase) map[string]any { return map[string]any{"message": h.publicNote} }},
	}
}

func TestHiddenTextReachesNoToken(t *testing.T) {
	onThread, standalone := operations()
	ops := map[string]operation{}
	for _, op := range append(onThread, standalone...) {
		ops[op.name] = op
	}
	roads := hiddenRoads()
	taken := map[string]bool{}
	for _, r := range roads {
		if _, ok := ops[r.op]; !ok {
			t.Fatalf("road %s: no operation %q", r.name, r.op)
		}
		taken[r.op] = true
	}
	for name := range ops {
		if _, without := roadsWithoutThreadText[name]; !taken[name] && !without {
			t.Errorf("operation %s is neither a road of this test nor listed as carrying no thread's text", name)
		}
	}
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		t.Parallel() // the two databases side by side: each has its own server
		s := newServer(t, db, relaxedLimits())
		c := newCast(s)
		// A feed cursor belongs to its reader (§ 19): each caller takes its own, from before
		// the cases' hides.
		feedFrom := map[string]string{}
		for name, authorization := range c.authorization {
			reader, err := s.svc.AuthenticateHeader(context.Background(), "127.0.0.1", []string{authorization})
			if err != nil || reader == nil {
				continue // a caller the matrix names for its refusal reads no feed
			}
			if feedFrom[name], err = s.svc.FeedCursor(context.Background(), reader, []byte(`{}`)); err != nil {
				delete(feedFrom, name)
			}
		}
		shared := c.hiddenCase(t, s, false)

		for _, r := range roads {
			op := ops[r.op]
			transports := []string{"HTTP"}
			if op.tool != "" {
				transports = append(transports, "MCP")
			}
			for _, transport := range transports {
				h := shared
				if r.fresh {
					h = c.hiddenCase(t, s, r.op == "confirm")
				}
				where := r.name + " over " + transport
				var got answer
				if r.op == "feed" {
					got = s.readFeed(t, c.authorization[r.as], feedFrom[r.as], `"subject":"`+h.root+`"`)
				} else {
					got = s.call(op, transport, c.authorization[r.as], r.input(h))
				}
				if got.outcome != "ok" {
					t.Errorf("%s: %s", where, got)
					continue
				}
				checkNoHiddenText(t, where, got.raw)
				if r.carries {
					checkTitles(t, where, got, h.thread, nil)
				}
				if r.name == "read_thread" && !bytes.Contains(got.raw, []byte(publicReason)) {
					t.Errorf("%s: a reason made public does not reach the token: %s", where, clip(string(got.raw), 400))
				}
			}
		}

		// Unhidden, the title is back on every road that carries it.
		if _, err := asMap(s.svc.Unhide)(context.Background(), c.human, []byte(`{"message":"`+shared.root+`"}`)); err != nil {
			t.Fatal(err)
		}
		for _, r := range roads {
			op := ops[r.op]
			if !r.carries || r.fresh {
				continue
			}
			transports := []string{"HTTP"}
			if op.tool != "" {
				transports = append(transports, "MCP")
			}
			for _, transport := range transports {
				where := r.name + " over " + transport + ", unhidden"
				got := s.call(op, transport, c.authorization[r.as], r.input(shared))
				if got.outcome != "ok" {
					t.Errorf("%s: %s", where, got)
					continue
				}
				title := "Where does the key " + titleSecret + " go?"
				checkTitles(t, where, got, shared.thread, &title)
			}
		}
	})
}

// hiddenCase prepares a thread whose opening message the human hid with a reason for humans
// only; deferred adds the creator's defer, a proposal a lock holder confirms.
func (c *cast) hiddenCase(t *testing.T, s *server, deferred bool) hiddenCase {
	t.Helper()
	run := func(op func(context.Context, *protocol.Actor, []byte) (map[string]any, error), a *protocol.Actor, args string) map[string]any {
		t.Helper()
		res, err := op(context.Background(), a, []byte(args))
		if err != nil {
			t.Fatalf("preparing a thread with a hidden opening message: %s: %v", args, err)
		}
		return res
	}
	send := asMap(s.svc.Send)
	asked := run(send, c.creator, `{"kind":"ask","from":{"extension":"`+openedWith+`"},"body":"Where does the key `+titleSecret+` go?\nAnd which port does the deploy use?"}`)
	h := hiddenCase{fixture: fixture{thread: at(asked, "thread", "id"), root: at(asked, "message", "id")}}
	note := func(body string) string {
		return at(run(send, c.agent, `{"kind":"note","thread":"`+h.thread+`","parent":"`+h.root+`","body":"`+body+`"}`), "message", "id")
	}
	h.note, h.publicNote = note("It listens on 8080, see the log."), note("A note hidden in public.")
	h.claim = at(run(asMap(s.svc.Assert), c.creator, `{"thread":"`+h.thread+`","from":{"extension":"`+openedWith+`"},"statement":"The deploy uses 8080.","evidence":[{"kind":"note","ref":"the config"}]}`), "claim", "id")
	run(asMap(s.svc.Attest), c.agent, `{"claim":"`+h.claim+`","evidence":[{"kind":"log","ref":"listening on :8080"}]}`)
	if deferred {
		run(send, c.creator, `{"kind":"defer","thread":"`+h.thread+`","from":{"extension":"`+openedWith+`"},"body":"Later."}`)
	}
	run(asMap(s.svc.Hide), c.human, `{"message":"`+h.publicNote+`","reason":"`+publicReason+` reason.","public":true}`)
	run(asMap(s.svc.Hide), c.human, `{"message":"`+h.root+`","reason":"It quotes `+reasonSecret+` from the message."}`)
	return h
}

// checkNoHiddenText fails when an answer carries the hidden title's words or the reason
// written for humans.
func checkNoHiddenText(t *testing.T, where string, raw []byte) {
	t.Helper()
	for _, secret := range []string{titleSecret, reasonSecret} {
		if bytes.Contains(raw, []byte(secret)) {
			t.Errorf("%s: the answer carries %q: %s", where, secret, clip(string(raw), 600))
		}
	}
}

// checkTitles finds the thread in the answer (in any object whose id is the thread's): at
// least once, each time with the title want (nil: null, with title_hidden true).
func checkTitles(t *testing.T, where string, got answer, thread string, want *string) {
	t.Helper()
	var objects []map[string]any
	if got.result != nil {
		objects = threadObjects(got.result, thread, objects)
	} else { // the dataset: JSON Lines
		for _, line := range bytes.Split(got.raw, []byte("\n")) {
			var v any
			if json.Unmarshal(line, &v) == nil {
				objects = threadObjects(v, thread, objects)
			}
		}
	}
	if len(objects) == 0 {
		t.Errorf("%s: the answer does not carry the thread %s: %s", where, thread, clip(string(got.raw), 600))
	}
	for _, o := range objects {
		title, hidden := o["title"], o["title_hidden"]
		switch {
		case want == nil && (title != nil || hidden != true):
			t.Errorf("%s: the thread reads title %v, title_hidden %v; want null and true", where, title, hidden)
		case want != nil && (title != *want || hidden != nil):
			t.Errorf("%s: the unhidden thread reads title %v, title_hidden %v; want %q and none", where, title, hidden, *want)
		}
	}
}

// threadObjects collects the objects under v that are the thread: an id of it and a title.
func threadObjects(v any, thread string, out []map[string]any) []map[string]any {
	switch o := v.(type) {
	case map[string]any:
		if _, titled := o["title"]; titled && o["id"] == thread {
			out = append(out, o)
		}
		for _, x := range o {
			out = threadObjects(x, thread, out)
		}
	case []any:
		for _, x := range o {
			out = threadObjects(x, thread, out)
		}
	}
	return out
}

// readFeed reads GET /v1/feed from the cursor since until an event's data holds until, and
// answers with every byte read.
func (s *server) readFeed(t *testing.T, authorization, since, until string) answer {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.base+"/v1/feed?since="+url.QueryEscape(since), nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", authorization)
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("GET /v1/feed: %v", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return answer{outcome: fmt.Sprintf("status %d", resp.StatusCode), status: resp.StatusCode}
	}
	var raw bytes.Buffer
	lines := bufio.NewScanner(resp.Body)
	lines.Buffer(make([]byte, 0, 64<<10), 4<<20)
	for lines.Scan() {
		raw.Write(lines.Bytes())
		raw.WriteByte('\n')
		if strings.HasPrefix(lines.Text(), "data:") && strings.Contains(lines.Text(), until) && strings.Contains(lines.Text(), `"act":"hide"`) {
			return answer{outcome: "ok", status: resp.StatusCode, raw: raw.Bytes()}
		}
	}
	return answer{outcome: "the feed ended before the hide of the opening message", status: resp.StatusCode, raw: raw.Bytes()}
}
