package mcpserver_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/parleyforum/parley/protocol"
	"github.com/parleyforum/parley/protocol/mcpserver"
	"github.com/parleyforum/parley/storage"
	"github.com/parleyforum/parley/storage/storagetest"
)

// A thread at the reference limits (§ 8) — thread_max_messages messages of body_max_chars,
// thread_max_claims claims of claim_max_stances stances each, one claim's stances each with
// evidence_max_items items of evidence_ref_max_chars and a signed document repeating them — is
// far over the answer cap of MCP (some 12.5 MB here). read_thread and claim_graph give it in
// pages: every page is under the cap, and walking the cursors gives every claim and stance
// exactly once, and the claim graph's grounded labels of the whole thread.
func TestReadsAtTheLimitsComeInPagesUnderTheCap(t *testing.T) {
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		limits := protocol.DefaultLimits()
		// A request's deadline of a minute: the race detector makes the pure-Go SQLite ten
		// times slower, and this test is about the size of pages, not their speed.
		svc := protocol.New(db, protocol.Options{Limits: limits, Version: "test", Deadline: time.Minute})
		srv := httptest.NewServer(mcpserver.New(svc, mcpserver.Options{}))
		t.Cleanup(srv.Close)
		f := &forum{t: t, db: db, svc: svc, url: srv.URL + "/mcp", log: &logBuffer{}}
		alice := f.connect(f.token("alice", "read,write", false))
		bob := f.connect(f.token("bob", "read,write", false))
		var opened sendOut
		ok(t, alice, "send", `{"kind":"ask","body":"How large may one thread grow?"}`, &opened)
		th := opened.Thread.ID
		var asserted struct{ Claim struct{ ID string } }
		ok(t, alice, "claim_assert", `{"thread":"`+th+`","statement":"It is bounded.","evidence":[{"kind":"note","ref":"limits"}]}`, &asserted)
		ok(t, bob, "claim_attest", `{"claim":"`+asserted.Claim.ID+`","evidence":[{"kind":"note","ref":"agreed"}]}`, nil)
		start := time.Now()
		want := fillToLimits(t, db, th, limits)
		t.Logf("filled in %v", time.Since(start))
		reader := f.token("reader", "read", false)

		// read_thread, page by page.
		var cursor string
		seenClaims, seenStances := map[string]int{}, map[string]int{}
		largest, pages, messages := 0, 0, 0
		last := ""
		for {
			args := `{"thread":"` + th + `"}`
			if cursor != "" {
				args = `{"thread":"` + th + `","cursor":"` + cursor + `"}`
			}
			raw := answerOf(t, f, reader, "read_thread", args)
			largest, pages = max(largest, len(raw)), pages+1
			t.Logf("page %d: %d bytes", pages, len(raw))
			var page struct {
				Messages []json.RawMessage
				Claims   []struct {
					ID                                       string
					Continued                                bool
					Attestations, Refutations, Verifications []struct{ ID string }
				}
				NextCursor *string `json:"next_cursor"`
			}
			if err := json.Unmarshal(raw, &page); err != nil {
				t.Fatal(err)
			}
			if pages > 1 && len(page.Messages) != 0 {
				t.Fatalf("page %d repeats the messages", pages)
			}
			messages += countMessages(t, raw)
			for i, c := range page.Claims {
				if c.Continued {
					if i != 0 || c.ID != last {
						t.Fatalf("page %d: claim %s continued, but the previous page ended with %s", pages, c.ID, last)
					}
				} else {
					seenClaims[c.ID]++
				}
				last = c.ID
				for _, group := range [][]struct{ ID string }{c.Attestations, c.Refutations, c.Verifications} {
					for _, st := range group {
						seenStances[st.ID]++
					}
				}
			}
			if page.NextCursor == nil {
				break
			}
			cursor = *page.NextCursor
		}
		t.Logf("read in %v", time.Since(start))
		t.Logf("read_thread: %d pages, the largest %d bytes (cap %d)", pages, largest, mcpserver.DefaultMaxAnswerBytes)
		if pages < 3 || largest > mcpserver.DefaultMaxAnswerBytes*3/4 {
			t.Errorf("read_thread: %d pages, the largest %d bytes; want several, each within 3/4 of the cap %d", pages, largest, mcpserver.DefaultMaxAnswerBytes)
		}
		if messages != limits.ThreadMaxMessages {
			t.Errorf("read_thread gave %d messages, want %d", messages, limits.ThreadMaxMessages)
		}
		exactlyOnce(t, "read_thread claims", seenClaims, want.claims)
		exactlyOnce(t, "read_thread stances", seenStances, want.stances)

		// claim_graph, page by page.
		cursor, largest, pages = "", 0, 0
		nodes, edges := map[string]int{}, map[string]int{}
		labels := map[string]string{}
		for {
			args := `{"thread":"` + th + `"}`
			if cursor != "" {
				args = `{"thread":"` + th + `","cursor":"` + cursor + `"}`
			}
			raw := answerOf(t, f, reader, "claim_graph", args)
			largest, pages = max(largest, len(raw)), pages+1
			var page struct {
				Nodes      []struct{ ID, Type, Grounded string }
				Edges      []struct{ From, To, Kind string }
				NextCursor *string `json:"next_cursor"`
			}
			if err := json.Unmarshal(raw, &page); err != nil {
				t.Fatal(err)
			}
			for _, n := range page.Nodes {
				nodes[n.ID]++
				if n.Type == "claim" {
					labels[n.ID] = n.Grounded
				}
			}
			for _, e := range page.Edges {
				edges[e.From+" "+e.Kind+" "+e.To]++
			}
			if page.NextCursor == nil {
				break
			}
			cursor = *page.NextCursor
		}
		t.Logf("claim_graph: %d pages, the largest %d bytes", pages, largest)
		if pages < 3 || largest > mcpserver.DefaultMaxAnswerBytes*3/4 {
			t.Errorf("claim_graph: %d pages, the largest %d bytes", pages, largest)
		}
		wantNodes := map[string]bool{opened.Message.ID: true}
		for id := range want.claims {
			wantNodes[id] = true
		}
		for id := range want.stances {
			wantNodes[id] = true
		}
		exactlyOnce(t, "claim_graph nodes", nodes, wantNodes)
		if len(edges) != len(want.claims)+len(want.stances)+len(want.supersedes) {
			t.Errorf("claim_graph: %d edges, want %d", len(edges), len(want.claims)+len(want.stances)+len(want.supersedes))
		}
		for e, n := range edges {
			if n != 1 {
				t.Errorf("edge %s given %d times", e, n)
			}
		}
		for id, l := range want.labels {
			if labels[id] != l {
				t.Errorf("claim %s: grounded %q, want %q (the whole graph's)", id, labels[id], l)
			}
		}

		// A document must be whole: refused, not a fault; and a cursor is only for its read.
		if r := refused(t, alice, "claim_graph", `{"thread":"`+th+`","format":"graphml"}`); r.Reason != "limit_exceeded" {
			t.Errorf("claim_graph as graphml: %+v", r)
		}
		var first struct {
			NextCursor string `json:"next_cursor"`
		}
		ok(t, alice, "read_thread", `{"thread":"`+th+`"}`, &first)
		var other sendOut
		ok(t, alice, "send", `{"kind":"ask","body":"Another thread"}`, &other)
		for _, args := range []struct{ tool, args string }{
			{"read_thread", `{"thread":"` + th + `","cursor":"bogus"}`},
			{"read_thread", `{"thread":"` + other.Thread.ID + `","cursor":"` + first.NextCursor + `"}`},
			{"claim_graph", `{"thread":"` + th + `","cursor":"` + first.NextCursor + `"}`},
		} {
			if r := refused(t, alice, args.tool, args.args); r.Reason != "invalid_body" {
				t.Errorf("%s %s: %+v, want invalid_body", args.tool, args.args, r)
			}
		}
	})
}

// answerOf calls a tool over plain JSON-RPC and answers its structuredContent as the bytes
// the server sent, refusing a refusal or a fault.
func answerOf(t *testing.T, f *forum, secret, tool, args string) json.RawMessage {
	t.Helper()
	_, body := post(t, f.url, secret, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"`+tool+`","arguments":`+args+`}}`)
	var rpc struct {
		Result *struct {
			StructuredContent json.RawMessage
			IsError           bool
		}
		Error json.RawMessage
	}
	if err := json.Unmarshal(body, &rpc); err != nil || rpc.Result == nil || rpc.Result.IsError {
		t.Fatalf("%s %s: %.300s", tool, args, body)
	}
	return rpc.Result.StructuredContent
}

// countMessages counts the messages of a read_thread answer, replies included.
func countMessages(t *testing.T, raw json.RawMessage) int {
	t.Helper()
	type msg struct {
		Replies []msg `json:"replies"`
	}
	var page struct{ Messages []msg }
	if err := json.Unmarshal(raw, &page); err != nil {
		t.Fatal(err)
	}
	var count func([]msg) int
	count = func(ms []msg) int {
		n := len(ms)
		for _, m := range ms {
			n += count(m.Replies)
		}
		return n
	}
	return count(page.Messages)
}

func exactlyOnce(t *testing.T, what string, seen map[string]int, want map[string]bool) {
	t.Helper()
	for id, n := range seen {
		if n != 1 || !want[id] {
			t.Errorf("%s: %s given %d times (want: %v)", what, id, n, want[id])
		}
	}
	if len(seen) != len(want) {
		t.Errorf("%s: %d given, want %d", what, len(seen), len(want))
	}
}

// filled is what fillToLimits stored: the claims and stances by key, the supersessions, and
// the grounded label each claim must have.
type filled struct {
	claims, stances map[string]bool
	supersedes      map[string]string
	labels          map[string]string
}

// fillToLimits fills the thread (with one message, one claim and one attestation already)
// to the limits through storage, copying the rows the protocol wrote: the API's write rate
// would take minutes. Claim 1 has stances of the largest evidence, each with a signed
// document that repeats it; every tenth claim is refuted, the third superseded by the
// fourth, the sixth by the eleventh (refuted: so the sixth stays in).
func fillToLimits(t *testing.T, db *storage.DB, th string, l protocol.Limits) filled {
	t.Helper()
	ctx := context.Background()
	id, _ := protocol.ParseIDString(th, "th_")
	out := filled{claims: map[string]bool{}, stances: map[string]bool{}, supersedes: map[string]string{}, labels: map[string]string{}}
	err := db.Write(ctx, func(ctx context.Context, f *storage.Forum) error {
		msgs, err := f.Messages(ctx, id)
		if err != nil {
			return err
		}
		root := msgs[0]
		for i := 1; i < l.ThreadMaxMessages; i++ {
			m := root
			m.ID, m.ParentID, m.AskID, m.Depth, m.Kind = 0, &root.ID, &root.ID, 1, "answer"
			m.Body = strings.Repeat(fmt.Sprintf("m%d ", i), l.BodyMaxChars)[:l.BodyMaxChars]
			if err := f.InsertMessage(ctx, &m); err != nil {
				return err
			}
		}
		claims, err := f.ClaimsOf(ctx, id)
		if err != nil {
			return err
		}
		stances, err := f.StancesOf(ctx, []int64{claims[0].ID})
		if err != nil {
			return err
		}
		template, attest := claims[0], stances[0]
		all := []storage.Claim{claims[0]}
		for len(all) < l.ThreadMaxClaims {
			c := template
			c.ID, c.Statement = 0, strings.Repeat("s", l.BodyMaxChars)
			if err := f.InsertClaim(ctx, &c); err != nil {
				return err
			}
			all = append(all, c)
		}
		big := make([]map[string]string, l.EvidenceMaxItems)
		for i := range big {
			big[i] = map[string]string{"kind": "note", "ref": strings.Repeat("r", l.EvidenceRefMaxChars), "note": strings.Repeat("n", 500)}
		}
		bigEvidence, _ := json.Marshal(big)
		document, _ := json.Marshal(map[string]any{"type": "ParleyStance", "evidence": big})
		var rows []storage.Stance
		for n, c := range all {
			refuted := (n+1)%10 == 0
			have := 0
			if n == 0 {
				have = 1 // bob's attestation
			}
			for k := have; k < l.ClaimMaxStances; k++ {
				st := attest
				st.ID, st.ClaimID, st.Identity = 0, c.ID, fmt.Sprintf("test:s%d-%d", n, k)
				st.Signature, st.SignatureAt, st.SignatureKeyID, st.SignaturePublicKey = nil, nil, nil, nil
				if n == 0 {
					doc := string(document)
					st.Evidence, st.Proof = string(bigEvidence), &doc
				}
				if refuted && k == l.ClaimMaxStances-1 {
					body := "wrong"
					st.Kind, st.Body = storage.StanceRefute, &body
				}
				rows = append(rows, st)
			}
		}
		if err := f.InsertStances(ctx, rows); err != nil {
			return err
		}
		for _, p := range [][2]int{{2, 3}, {5, 9}} {
			older, newer := all[p[0]], all[p[1]]
			older.SupersededBy = &newer.ID
			if err := f.UpdateClaim(ctx, &older); err != nil {
				return err
			}
			out.supersedes[protocol.ClaimKey(older.ID)] = protocol.ClaimKey(newer.ID)
		}
		for n, c := range all {
			key := protocol.ClaimKey(c.ID)
			out.claims[key], out.labels[key] = true, "in"
			if (n+1)%10 == 0 || n == 2 {
				out.labels[key] = "out"
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range mustStances(t, db, id) {
		out.stances[protocol.StanceKey(c.Kind, c.ID)] = true
	}
	return out
}

func mustStances(t *testing.T, db *storage.DB, thread int64) []storage.Stance {
	t.Helper()
	ctx := context.Background()
	claims, err := db.Read().ClaimsOf(ctx, thread)
	if err != nil {
		t.Fatal(err)
	}
	ids := make([]int64, len(claims))
	for i, c := range claims {
		ids[i] = c.ID
	}
	stances, err := db.Read().StancesOf(ctx, ids)
	if err != nil {
		t.Fatal(err)
	}
	return stances
}
