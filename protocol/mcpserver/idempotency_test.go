package mcpserver_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

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

// TestEveryWriteToolTakesAnIdempotencyKey walks every write tool of tools/list: each has a
// row here, says in its description how to retry, and, retried with its idempotency_key,
// answers its first result and writes nothing more; another input under the key is
// idempotency_conflict (§ 15).
func TestEveryWriteToolTakesAnIdempotencyKey(t *testing.T) {
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		f := newForum(t, db, protocol.Limits{})
		const proof = `[{"kind":"hash","ref":"sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"}]`
		alice, bob := f.connect(f.token("alice", "read,write", false)), f.connect(f.token("bob", "read,write", false))
		mod := f.connect(f.token("mod", "read,write,lock,verify", false))
		ann := f.connect(f.token("ann", "", true))
		if _, err := f.svc.CreateRoom(t.Context(), protocol.OperatorActor(), []byte(`{"name":"research","title":"Research"}`)); err != nil {
			t.Fatal(err)
		}
		var opened struct {
			Message struct{ ID string } `json:"message"`
			Thread  struct{ ID string } `json:"thread"`
		}
		ok(t, alice, "send", `{"kind":"ask","body":"Which port?"}`, &opened)
		th, ask := opened.Thread.ID, opened.Message.ID
		ok(t, bob, "send", `{"kind":"answer","thread":"`+th+`","body":"8080."}`, &opened)
		answer := opened.Message.ID
		ok(t, alice, "send", `{"kind":"ask","body":"Which host?"}`, &opened)
		other := opened.Thread.ID
		claim := func(statement string) string {
			var c struct {
				Claim struct{ ID string } `json:"claim"`
			}
			ok(t, alice, "claim_assert", `{"thread":"`+th+`","statement":"`+statement+`","evidence":`+proof+`}`, &c)
			return c.Claim.ID
		}
		// The attested claim is the one verified: a verifier seals a supported claim.
		attested, spare, refuted := claim("8080"), claim("8081"), claim("8082")
		writes := []struct {
			tool        string
			caller      *mcp.ClientSession
			args, other string // JSON objects without the key
		}{
			{"send", bob, `{"kind":"note","thread":"` + th + `","body":"Noted."}`, `{"kind":"note","thread":"` + th + `","body":"Noted again."}`},
			{"confirm", mod, `{"thread":"` + th + `"}`, `{"thread":"` + other + `"}`},
			{"mark", ann, `{"thread":"` + th + `","state":"deferred"}`, `{"thread":"` + th + `","state":"rejected"}`},
			{"message_hide", mod, `{"message":"` + answer + `","reason":"leaked"}`, `{"message":"` + answer + `","reason":"wrong"}`},
			{"message_unhide", mod, `{"message":"` + answer + `"}`, `{"message":"` + ask + `"}`},
			{"thread_move", ann, `{"thread":"` + th + `","room":"research"}`, `{"thread":"` + th + `","room":"general"}`},
			{"claim_assert", alice, `{"thread":"` + th + `","statement":"It holds.","evidence":` + proof + `}`,
				`{"thread":"` + th + `","statement":"It does not.","evidence":` + proof + `}`},
			{"claim_attest", bob, `{"claim":"` + attested + `","evidence":` + proof + `}`, `{"claim":"` + spare + `","evidence":` + proof + `}`},
			{"claim_refute", bob, `{"claim":"` + refuted + `","evidence":` + proof + `,"body":"8084"}`, `{"claim":"` + refuted + `","evidence":` + proof + `,"body":"8085"}`},
			{"claim_verify", mod, `{"claim":"` + attested + `"}`, `{"claim":"` + spare + `"}`},
			{"artifact_put", bob, `{"content_base64":"UEFTUwo=","media_type":"text/plain"}`, `{"content_base64":"RkFJTAo=","media_type":"text/plain"}`},
			{"key_register", bob, `{"public_key":"11qYAYKxCrfVS/7TyWQHOg7hcvPapiMlrwIaaPcHURo="}`, `{"public_key":"AAqYAYKxCrfVS/7TyWQHOg7hcvPapiMlrwIaaPcHURo="}`},
		}
		rows := map[string]bool{}
		for _, w := range writes {
			rows[w.tool] = true
		}
		tools, err := bob.ListTools(t.Context(), nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, tool := range tools.Tools {
			if tool.Annotations.ReadOnlyHint {
				continue
			}
			if !rows[tool.Name] {
				t.Errorf("write tool %s has no row here: does it take idempotency_key?", tool.Name)
			}
			if !strings.Contains(tool.Description, "idempotency_key") {
				t.Errorf("write tool %s does not say how to retry: %q", tool.Name, tool.Description)
			}
			delete(rows, tool.Name)
		}
		for name := range rows {
			t.Errorf("%s has a row but is no write tool", name)
		}
		withKey := func(args, key string) string {
			return strings.TrimSuffix(args, "}") + `,"idempotency_key":"` + key + `"}`
		}
		for i, w := range writes {
			key := fmt.Sprintf("walk-%d", i)
			first := call(t, w.caller, w.tool, withKey(w.args, key))
			if first.IsError {
				t.Errorf("%s: the first call is refused: %s", w.tool, text(t, first))
				continue
			}
			before := census(t, f)
			again := call(t, w.caller, w.tool, withKey(w.args, key))
			if again.IsError || text(t, again) != text(t, first) {
				t.Errorf("%s retried answers\n%s\nthe first answer was\n%s", w.tool, text(t, again), text(t, first))
			}
			if after := census(t, f); after != before {
				t.Errorf("%s: the retry wrote: %s, then %s", w.tool, before, after)
			}
			if r := refused(t, w.caller, w.tool, withKey(w.other, key)); r.Reason != "idempotency_conflict" || r.Status != 422 {
				t.Errorf("%s: another input under the key: %+v", w.tool, r)
			}
			if after := census(t, f); after != before {
				t.Errorf("%s: the conflict wrote: %s, then %s", w.tool, before, after)
			}
		}
	})
}

// census is what the forum holds, as the JSON export counts it, and the keys registered.
func census(t *testing.T, f *forum) string {
	t.Helper()
	var n struct {
		Nodes, Edges, Threads, Messages, Events, Claims []json.RawMessage
	}
	var buf bytes.Buffer
	if err := f.svc.WriteExport(context.Background(), 0, "json", &buf); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(buf.Bytes(), &n); err != nil {
		t.Fatal(err)
	}
	keys, err := f.svc.ListKeys(context.Background(), protocol.HumanActor("ann"), []byte(`{"identity":"`+protocol.AgentIdentity(f.svc.Realm(), "bob")+`"}`))
	if err != nil {
		t.Fatal(err)
	}
	k, _ := json.Marshal(keys)
	return fmt.Sprintf("%d nodes, %d edges, %d threads, %d messages, %d events, %d claims; keys %s",
		len(n.Nodes), len(n.Edges), len(n.Threads), len(n.Messages), len(n.Events), len(n.Claims), k)
}
