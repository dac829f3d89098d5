package protocol_test

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/parleyforum/parley/protocol"
	"github.com/parleyforum/parley/storage"
	"github.com/parleyforum/parley/storage/storagetest"
)

// pager reads one page of a list as a reads it, from cursor ("" for the first page), and
// answers the cursor of the next page ("" when the list gave none).
type pager func(a *protocol.Actor, cursor string) (string, error)

// A list and the caller reading it.
type listRead struct {
	name string
	by   *protocol.Actor
	page pager
}

// § 19 "Cursors belong to their list": every list that hands out a cursor takes it back for
// the same list — the same thread, query and filters, read by the same identity within the
// same rooms — and refuses it, invalid_body and saying why, on any other list; among them
// another identity's list, and the same identity's through a token scoped to other rooms.
func TestCursorsBelongToTheirList(t *testing.T) {
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		ctx := context.Background()
		f := newRoomForum(t, db)
		// Pages of a few kilobytes, so that a thread and its graph come in several.
		paged := protocol.New(db, protocol.Options{Limits: generous(), ReadPageBytes: 1500})
		asker, bob := agent("asker", "read,write"), agent("bob", "read,write,verify")
		me := agent("reader", "read")
		meInResearch := scoped("reader", "read", roomID(f.research))
		research, ops := f.inResearch.Thread.ID, f.inOps.Thread.ID
		for _, opened := range []*protocol.SendResult{f.inResearch, f.inOps} {
			th := opened.Thread.ID
			for i := range 6 {
				send(t, f.svc, bob, envelope("answer", th, fmt.Sprintf("Answer %d, a word of some length to fill the page a little more.", i),
					"parent", opened.Message.ID))
				c := mustClaim(t, f.svc, asker, "assert", jsonOf(map[string]any{"thread": th,
					"statement": fmt.Sprintf("Claim %d holds, a word of some length.", i), "evidence": json.RawMessage(proof)}))
				if i < 2 {
					mustClaim(t, f.svc, bob, "attest", `{"claim":"`+c.ID+`","evidence":`+proof+`}`)
				}
			}
		}

		str := func(v *string) string {
			if v == nil {
				return ""
			}
			return *v
		}
		withCursor := func(in map[string]any, field, cursor string) []byte {
			out := map[string]any{}
			for k, v := range in {
				out[k] = v
			}
			if cursor != "" {
				out[field] = cursor
			}
			return []byte(jsonOf(out))
		}
		events := func(th string) pager {
			return func(a *protocol.Actor, c string) (string, error) {
				res, err := f.svc.ReadEvents(ctx, a, withCursor(map[string]any{"thread": th}, "since", c))
				if err != nil {
					return "", err
				}
				return res.Cursor, nil
			}
		}
		readThread := func(th string) pager {
			return func(a *protocol.Actor, c string) (string, error) {
				res, err := paged.ReadThread(ctx, a, withCursor(map[string]any{"thread": th}, "cursor", c))
				if err != nil {
					return "", err
				}
				return str(res.NextCursor), nil
			}
		}
		graphOf := func(in map[string]any) pager {
			return func(a *protocol.Actor, c string) (string, error) {
				res, err := paged.Graph(ctx, a, withCursor(in, "cursor", c))
				if err != nil {
					return "", err
				}
				return str(res.NextCursor), nil
			}
		}
		threads := func(in map[string]any) pager {
			return func(a *protocol.Actor, c string) (string, error) {
				res, err := f.svc.ListThreads(ctx, a, withCursor(in, "cursor", c))
				if err != nil {
					return "", err
				}
				return str(res.Cursor), nil
			}
		}
		browse := func(q protocol.BrowseQuery) pager {
			return func(a *protocol.Actor, c string) (string, error) {
				q.Cursor, q.Limit = c, 1
				res, err := f.svc.Browse(ctx, a, q)
				if err != nil {
					return "", err
				}
				return str(res.Cursor), nil
			}
		}
		search := func(in map[string]any) pager {
			return func(a *protocol.Actor, c string) (string, error) {
				res, err := f.svc.Search(ctx, a, withCursor(in, "cursor", c))
				if err != nil {
					return "", err
				}
				return str(res.Cursor), nil
			}
		}
		inbox := func(in map[string]any) pager {
			return func(a *protocol.Actor, c string) (string, error) {
				res, err := f.svc.Inbox(ctx, a, withCursor(in, "since", c))
				if err != nil {
					return "", err
				}
				return res.Cursor, nil
			}
		}
		feed := func(in map[string]any) pager {
			return func(a *protocol.Actor, c string) (string, error) {
				if c == "" {
					return f.svc.FeedCursor(ctx, a, withCursor(in, "since", ""))
				}
				fd, err := f.svc.OpenFeed(ctx, a, withCursor(in, "since", c))
				if err != nil {
					return "", err
				}
				defer fd.Close()
				return fd.Cursor(), nil
			}
		}
		proposals := func(a *protocol.Actor, c string) (string, error) {
			res, err := f.svc.Proposals(ctx, a, c, 1)
			if err != nil {
				return "", err
			}
			return str(res.Cursor), nil
		}
		claimProposals := func(a *protocol.Actor, c string) (string, error) {
			res, err := f.svc.ClaimProposals(ctx, a, c, 1)
			if err != nil {
				return "", err
			}
			return str(res.Cursor), nil
		}
		awaiting := func(a *protocol.Actor, c string) (string, error) {
			res, err := f.svc.AwaitingVerifier(ctx, a, c, 1)
			if err != nil {
				return "", err
			}
			return str(res.Cursor), nil
		}
		// Two threads wait for a human's confirm: the agents' answers proposed their state.
		send(t, f.svc, asker, envelope("decide", f.inGen.Thread.ID, "Decided, as a model proposes."))
		send(t, f.svc, asker, envelope("decide", f.inInner.Thread.ID, "Decided too."))

		word := map[string]any{"q": "word", "limit": 1}
		for _, tc := range []struct {
			list   listRead
			others []listRead
		}{
			{listRead{"a thread's events", me, events(research)}, []listRead{
				{"another thread's events", me, events(ops)},
				{"another identity's", bob, events(research)},
				{"the identity's in fewer rooms", meInResearch, events(research)},
			}},
			{listRead{"a thread's pages", me, readThread(research)}, []listRead{
				{"another thread's pages", me, readThread(ops)},
				{"another identity's", bob, readThread(research)},
			}},
			{listRead{"a thread's graph", me, graphOf(map[string]any{"thread": research})}, []listRead{
				{"another thread's graph", me, graphOf(map[string]any{"thread": ops})},
				{"the forum's graph", me, graphOf(map[string]any{})},
				{"the graph of a room", me, graphOf(map[string]any{"thread": research, "room": "research"})},
			}},
			{listRead{"the threads", me, threads(map[string]any{"limit": 1})}, []listRead{
				{"the open threads", me, threads(map[string]any{"limit": 1, "state": "open"})},
				{"a room's threads", me, threads(map[string]any{"limit": 1, "room": "research"})},
				{"by attention", me, threads(map[string]any{"limit": 1, "order": "attention"})},
				{"another identity's", bob, threads(map[string]any{"limit": 1})},
				{"the identity's in fewer rooms", meInResearch, threads(map[string]any{"limit": 1})},
			}},
			{listRead{"a room's threads", me, threads(map[string]any{"limit": 1, "room": "research"})}, []listRead{
				{"another room's threads", me, threads(map[string]any{"limit": 1, "room": "ops"})},
			}},
			{listRead{"the threads by attention", me, threads(map[string]any{"limit": 1, "order": "attention"})}, []listRead{
				{"the decided threads by attention", me, threads(map[string]any{"limit": 1, "order": "attention", "state": "decided"})},
				{"a room's threads by attention", me, threads(map[string]any{"limit": 1, "order": "attention", "room": "ops"})},
			}},
			{listRead{"the pages' threads", me, browse(protocol.BrowseQuery{})}, []listRead{
				{"the unconfirmed", me, browse(protocol.BrowseQuery{Unconfirmed: true})},
				{"the open", me, browse(protocol.BrowseQuery{State: protocol.StateOpen})},
				{"a room's", me, browse(protocol.BrowseQuery{Room: f.research.ID})},
			}},
			{listRead{"a search", me, search(word)}, []listRead{
				{"another query", me, search(map[string]any{"q": "holds", "limit": 1})},
				{"the answers found", me, search(map[string]any{"q": "word", "limit": 1, "kind": "answer"})},
				{"a thread's", me, search(map[string]any{"q": "word", "limit": 1, "thread": research})},
				{"a room's", me, search(map[string]any{"q": "word", "limit": 1, "room": "ops"})},
				{"another identity's", bob, search(word)},
			}},
			{listRead{"the inbox", me, inbox(map[string]any{"limit": 1})}, []listRead{
				{"a room's inbox", me, inbox(map[string]any{"limit": 1, "room": "research"})},
				{"an extension's inbox", me, inbox(map[string]any{"limit": 1, "extension": "w2"})},
				{"another identity's", bob, inbox(map[string]any{"limit": 1})},
				{"the identity's in fewer rooms", meInResearch, inbox(map[string]any{"limit": 1})},
			}},
			{listRead{"a thread's feed", me, feed(map[string]any{"thread": research})}, []listRead{
				{"another thread's feed", me, feed(map[string]any{"thread": ops})},
				{"the whole feed", me, feed(map[string]any{})},
				{"another identity's", bob, feed(map[string]any{"thread": research})},
			}},
			{listRead{"the proposals", me, proposals}, []listRead{
				{"another identity's", bob, proposals},
				{"the identity's in fewer rooms", meInResearch, proposals},
			}},
			{listRead{"the claims' proposals", me, claimProposals}, []listRead{
				{"another identity's", bob, claimProposals},
			}},
			{listRead{"the claims awaiting a verifier", me, awaiting}, []listRead{
				{"another identity's", bob, awaiting},
			}},
		} {
			cursor, err := tc.list.page(tc.list.by, "")
			if err != nil || cursor == "" {
				t.Fatalf("%s: no cursor (%q, %v)", tc.list.name, cursor, err)
			}
			if _, err := tc.list.page(tc.list.by, cursor); err != nil {
				t.Errorf("%s refuses its own cursor: %v", tc.list.name, err)
			}
			for _, other := range tc.others {
				_, err := other.page(other.by, cursor)
				if err == nil {
					t.Errorf("a cursor of %s is taken by %s", tc.list.name, other.name)
					continue
				}
				if e := refusal(t, err); e.Reason != protocol.ReasonInvalidBody || !strings.Contains(e.Message, "another list") {
					t.Errorf("a cursor of %s on %s: %s (%s), want invalid_body naming another list", tc.list.name, other.name, e.Reason, e.Message)
				}
			}
		}
	})
}

// A cursor a server gave before cursors named their list — signed with the forum's key,
// numbers and all — is refused cleanly, saying so.
func TestCursorFromBeforeListsIsRefused(t *testing.T) {
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		ctx := context.Background()
		svc := newService(t, db)
		th := send(t, svc, agent("alice", "read,write"), envelope("ask", "", "Where was I?")).Thread.ID
		if _, err := svc.ReadEvents(ctx, reader, []byte(`{"thread":"`+th+`"}`)); err != nil {
			t.Fatal(err) // makes the key when no migration did
		}
		encoded, err := db.Setting(ctx, storage.SettingCursorKey)
		if err != nil {
			t.Fatal(err)
		}
		key, err := base64.StdEncoding.DecodeString(encoded)
		if err != nil {
			t.Fatal(err)
		}
		old := func(payload string) string {
			m := hmac.New(sha256.New, key)
			m.Write([]byte(payload))
			return base64.RawURLEncoding.EncodeToString(append([]byte(payload), m.Sum(nil)[:16]...))
		}
		for _, tc := range []struct{ op, input string }{
			{"read_events", `{"thread":"` + th + `","since":"` + old("e1.0") + `"}`},
			{"inbox", `{"since":"` + old("i1.0.0") + `"}`},
			{"list_threads", `{"cursor":"` + old("t1.999") + `"}`},
			{"search", `{"q":"where","cursor":"` + old("s1.0.0.999") + `"}`},
		} {
			var err error
			switch tc.op {
			case "read_events":
				_, err = svc.ReadEvents(ctx, reader, []byte(tc.input))
			case "inbox":
				_, err = svc.Inbox(ctx, reader, []byte(tc.input))
			case "list_threads":
				_, err = svc.ListThreads(ctx, reader, []byte(tc.input))
			case "search":
				_, err = svc.Search(ctx, reader, []byte(tc.input))
			}
			if e := wantRefused(t, err, protocol.ReasonInvalidBody); !strings.Contains(e.Message, "earlier version") {
				t.Errorf("%s with a cursor of before: %s, want it named as one of an earlier version", tc.op, e.Message)
			}
		}
	})
}
