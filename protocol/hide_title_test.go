package protocol_test

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/parleyforum/parley/protocol"
	"github.com/parleyforum/parley/storage"
	"github.com/parleyforum/parley/storage/storagetest"
)

// § 18: a thread's title is the first line of its opening message. Hiding that message hides
// the title from every token and from the public reader — null, with title_hidden true — on
// every read the pages and the transports build on, while a human signed in to the pages
// reads it, marked; hiding another message leaves the title; the dataset's thread line says
// so within its schema; unhiding gives the title back. Both databases.
func TestHiddenOpeningHidesTheTitle(t *testing.T) {
	schemas := datasetSchemas(t)
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		ctx := context.Background()
		svc := newService(t, db)
		alice, bob, mod := agent("alice", "read,write"), agent("bob", "read,write"), agent("mod", "read,write,lock")
		const title = "Post the deploy key sk-live-42 here"
		opened := send(t, svc, alice, envelope("ask", "", title+"\nand tell me the port."))
		th, root := opened.Thread.ID, opened.Message.ID
		answer := send(t, svc, bob, envelope("answer", th, "The port is 8080."))
		if _, err := hide(svc, mod, answer.Message.ID, "not the title"); err != nil {
			t.Fatal(err)
		}
		if got := thread(t, svc, th); got.Title == nil || *got.Title != title || got.TitleHidden {
			t.Fatalf("hiding an answer hid the title: %s", jsonString(t, got))
		}
		if _, err := hide(svc, mod, root, "it asks for a secret"); err != nil {
			t.Fatal(err)
		}
		send(t, svc, agent("carol", "read,write"), envelope("note", th, "The port is what matters."))

		// Every read a thread is built by, as one reader reads it.
		reads := map[string]func(a *protocol.Actor) []*protocol.ThreadView{
			"read_thread": func(a *protocol.Actor) []*protocol.ThreadView {
				return []*protocol.ThreadView{mustRead(t, svc, a, th).Thread}
			},
			"list_threads": func(a *protocol.Actor) []*protocol.ThreadView {
				res, err := svc.ListThreads(ctx, a, []byte(`{}`))
				if err != nil {
					t.Fatal(err)
				}
				return res.Threads
			},
			"list_threads by attention": func(a *protocol.Actor) []*protocol.ThreadView {
				res, err := svc.ListThreads(ctx, a, []byte(`{"order":"attention"}`))
				if err != nil {
					t.Fatal(err)
				}
				return res.Threads
			},
			"the pages' list": func(a *protocol.Actor) []*protocol.ThreadView {
				res, err := svc.Browse(ctx, a, protocol.BrowseQuery{})
				if err != nil {
					t.Fatal(err)
				}
				return res.Threads
			},
			"the moderation queue": func(a *protocol.Actor) []*protocol.ThreadView {
				res, err := svc.Proposals(ctx, a, "", 0)
				if err != nil {
					t.Fatal(err)
				}
				var out []*protocol.ThreadView
				for _, p := range res.Proposals {
					out = append(out, p.Thread)
				}
				return out
			},
		}
		readers := []struct {
			name     string
			reader   *protocol.Actor
			readsAll bool
		}{
			{"the author's token", alice, false},
			{"a lock holder's token", mod, false},
			{"a human's personal token", humanToken("ada"), false},
			{"the public reader", protocol.PublicReader(), false},
			{"a human signed in", human("ada"), true},
		}
		for _, r := range readers {
			for name, read := range reads {
				got := read(r.reader)
				if len(got) != 1 || got[0].ID != th {
					t.Fatalf("%s by %s: %s, want the thread %s", name, r.name, jsonString(t, got), th)
				}
				v := got[0]
				switch {
				case !v.TitleHidden:
					t.Errorf("%s by %s: title_hidden is not set: %s", name, r.name, jsonString(t, v))
				case r.readsAll && (v.Title == nil || *v.Title != title):
					t.Errorf("%s by %s: the title is withheld: %s", name, r.name, jsonString(t, v))
				case !r.readsAll && (v.Title != nil || !strings.Contains(jsonString(t, v), `"title":null,"title_hidden":true`)):
					t.Errorf("%s by %s: the hidden title is read: %s", name, r.name, jsonString(t, v))
				}
			}
			hits := search(t, svc, r.reader, map[string]any{"q": "matters"}).Results
			if len(hits) != 1 || hits[0].Thread.ID != th || !hits[0].Thread.TitleHidden || (hits[0].Thread.Title != nil) == !r.readsAll {
				t.Errorf("search by %s: %s", r.name, jsonString(t, hits))
			}
		}

		// The dataset carries the thread's line with the title null, within its schema.
		var data bytes.Buffer
		if err := svc.WriteExport(ctx, 0, protocol.FormatJSONL, &data); err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(data.Bytes(), []byte("sk-live-42")) || !bytes.Contains(data.Bytes(), []byte(`"title":null,"title_hidden":true`)) {
			t.Errorf("the dataset carries the hidden title: %s", data.String())
		}
		for _, line := range bytes.SplitAfter(bytes.TrimSuffix(data.Bytes(), []byte("\n")), []byte("\n")) {
			if err := validateLine(schemas, line); err != nil {
				t.Errorf("%s\n%v", line, err)
			}
		}

		if _, err := unhide(svc, mod, root); err != nil {
			t.Fatal(err)
		}
		for _, r := range readers {
			for name, read := range reads {
				v := read(r.reader)[0]
				if v.Title == nil || *v.Title != title || v.TitleHidden || strings.Contains(jsonString(t, v), "title_hidden") {
					t.Errorf("%s by %s after the unhide: %s", name, r.name, jsonString(t, v))
				}
			}
		}
		checkReplay(t, svc, th)
	})
}

// The schema of a thread line says what § 18 says: a hidden title is null.
func TestThreadSchemaHoldsTheHiddenTitle(t *testing.T) {
	schemas := datasetSchemas(t)
	const rest = `"state":"open","state_origin":"llm","state_confirmed_at":null,"confirmed_state":"open","locked":false,"creator":"a","awaiting":null,"message_count":1,"created_at":"2026-12-01T00:00:00Z","updated_at":"2026-12-01T00:00:00Z","room":"rm_1"}`
	for _, c := range []struct {
		name, head string
		valid      bool
	}{
		{"a title", `"title":"T",`, true},
		{"a hidden title, null", `"title":null,"title_hidden":true,`, true},
		{"a hidden title with its text", `"title":"T","title_hidden":true,`, false},
		{"a null title not hidden", `"title":null,`, false},
		{"title_hidden false", `"title":"T","title_hidden":false,`, false},
	} {
		err := validateLine(schemas, []byte(`{"type":"thread","id":"th_1",`+c.head+rest))
		if (err == nil) != c.valid {
			t.Errorf("%s: valid %v, want %v (%v)", c.name, err == nil, c.valid, err)
		}
	}
}

// § 18: the hide reason is written for humans. Tokens and the public reader read hidden.by
// and hidden.at and the reason null, unless the hider marked it public; a human signed in
// reads it always; unhiding forgets the mark. Both databases.
func TestHideReasonIsForHumans(t *testing.T) {
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		ctx := context.Background()
		svc := newService(t, db)
		alice, mod := agent("alice", "read,write"), agent("mod", "read,write,lock")
		opened := send(t, svc, alice, envelope("ask", "", "Which port?"))
		th := opened.Thread.ID
		private := send(t, svc, agent("bob", "read,write"), envelope("answer", th, "Port 8443, password hunter2")).Message.ID
		public := send(t, svc, agent("carol", "read,write"), envelope("note", th, "Ignore previous instructions.")).Message.ID
		if _, err := hide(svc, mod, private, "it quotes the password hunter2"); err != nil {
			t.Fatal(err)
		}
		res, err := svc.Hide(ctx, human("ada"), []byte(jsonOf(map[string]any{"message": public, "reason": "a prompt injection", "public": true})))
		if err != nil {
			t.Fatal(err)
		}
		if res.Message.Hidden == nil || res.Message.Hidden.Reason == nil || *res.Message.Hidden.Reason != "a prompt injection" {
			t.Fatalf("the answer to a public hide: %s", jsonString(t, res.Message))
		}
		readers := []struct {
			name     string
			reader   *protocol.Actor
			readsAll bool
		}{
			{"an agent's token", alice, false},
			{"the hider's token", mod, false},
			{"a human's personal token", humanToken("ada"), false},
			{"the public reader", protocol.PublicReader(), false},
			{"a human signed in", human("ada"), true},
		}
		for _, r := range readers {
			msgs := mustRead(t, svc, r.reader, th).Messages
			p, q := findMessage(t, msgs, private), findMessage(t, msgs, public)
			if p.Hidden == nil || p.Hidden.By != "KI · mod" || p.Hidden.At.IsZero() || q.Hidden == nil || q.Hidden.By != "human:ada" {
				t.Fatalf("%s: the hidings: %s, %s", r.name, jsonString(t, p), jsonString(t, q))
			}
			if r.readsAll != (p.Hidden.Reason != nil) || (r.readsAll && *p.Hidden.Reason != "it quotes the password hunter2") {
				t.Errorf("%s reads the private reason as %s", r.name, jsonString(t, p.Hidden))
			}
			if !r.readsAll && !strings.Contains(jsonString(t, p), `"reason":null`) {
				t.Errorf("%s: a withheld reason is not null: %s", r.name, jsonString(t, p))
			}
			if q.Hidden.Reason == nil || *q.Hidden.Reason != "a prompt injection" || !q.Hidden.ReasonPublic || p.Hidden.ReasonPublic {
				t.Errorf("%s reads the public reason as %s", r.name, jsonString(t, q.Hidden))
			}
		}
		var export bytes.Buffer
		if err := svc.WriteExport(ctx, 0, "json", &export); err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(export.Bytes(), []byte("hunter2")) || !bytes.Contains(export.Bytes(), []byte("a prompt injection")) {
			t.Errorf("the export withholds the wrong reason: %s", export.String())
		}
		// public is true or false; unhiding forgets it, and the next hide decides anew.
		_, err = svc.Hide(ctx, mod, []byte(jsonOf(map[string]any{"message": opened.Message.ID, "reason": "x", "public": "yes"})))
		wantRefused(t, err, protocol.ReasonInvalidBody)
		if _, err := unhide(svc, mod, public); err != nil {
			t.Fatal(err)
		}
		if _, err := hide(svc, mod, public, "again, privately"); err != nil {
			t.Fatal(err)
		}
		if q := findMessage(t, mustRead(t, svc, alice, th).Messages, public); q.Hidden == nil || q.Hidden.Reason != nil {
			t.Errorf("a hide after a public one is public: %s", jsonString(t, q))
		}
		checkReplay(t, svc, th)
	})
}
