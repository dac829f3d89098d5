package protocol_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/parleyforum/parley/protocol"
	"github.com/parleyforum/parley/storage"
	"github.com/parleyforum/parley/storage/storagetest"
)

// A thread read in pages is one thread (§ 15, paged reads are read as of one point). Its
// pages are read while messages are sent to it, its state is answered and confirmed, claims
// of it are superseded, refuted and attested, new claims asserted, and a write that was
// running when the first page was read commits (on Postgres with a smaller message and claim
// number than ones committed beside it): together the pages are the thread the first page's
// snapshot held — the same thread on every page, the same messages, claims in the same
// states with the same stances, nothing written after it — and every page says the first
// page's point.
func TestReadThreadPagesAreReadAsOfTheFirstPage(t *testing.T) {
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		ctx := context.Background()
		l := generous()
		svc := protocol.New(db, protocol.Options{Limits: l, ReadPageBytes: 2500})
		whole := protocol.New(db, protocol.Options{Limits: l})
		alice, bob, carol := agent("alice", "read,write"), agent("bob", "read,write"), agent("carol", "read,write")
		mod := agent("mod", "read,write,lock")
		opened := send(t, svc, alice, envelope("ask", "", "Which ports are open on the gateway, and which of them answer?"))
		th := opened.Thread.ID
		other := send(t, svc, carol, envelope("ask", "", "Which hosts answer?")).Thread.ID
		for i := range 10 {
			send(t, svc, carol, envelope("note", th, fmt.Sprintf("Note %d: a scan of the gateway from the outside, port by port, with what each one answered.", i)))
		}
		var claims []string
		for i := range 8 {
			claims = append(claims, mustClaim(t, svc, alice, "assert", `{"thread":"`+th+`","statement":"port `+fmt.Sprint(8080+i)+` is open","evidence":`+proof+`}`).ID)
			if i%2 == 0 {
				mustClaim(t, svc, bob, "attest", `{"claim":"`+claims[i]+`","evidence":`+proof+`,"note":"it answered"}`)
			}
		}

		// A write runs while the first page is read: a message to the thread, a refutation of
		// the last claim and a new claim, not committed until released.
		root, last := idOf(t, opened.Message.ID, "msg_"), idOf(t, claims[7], "cl_")
		release, written := holdWrite(t, db, func(ctx context.Context, f *storage.Forum) error {
			if err := writeHeldNote(ctx, f, mustID(t, th), root); err != nil {
				return err
			}
			return writeHeldClaim(ctx, f, mustID(t, th), root, last)
		})
		if db.Kind() == storage.Postgres {
			// Beside it, in another thread (the held write holds this one), a message and a
			// claim are committed with larger numbers than the held ones: the first page's
			// point.
			send(t, svc, alice, envelope("note", other, "Host 1 answers."))
			mustClaim(t, svc, carol, "assert", `{"thread":"`+other+`","statement":"host 1 answers","evidence":`+proof+`}`)
		}
		first, err := svc.ReadThread(ctx, reader, []byte(`{"thread":"`+th+`"}`))
		if err != nil {
			t.Fatal(err)
		}
		// The thread as the first page's snapshot held it: nothing has committed since.
		held := readThread(t, whole, th)
		close(release)
		if err := <-written; err != nil {
			t.Fatal(err)
		}
		if first.AsOf == nil || first.AsOf.Event == nil || first.AsOf.Stance == nil || first.NextCursor == nil || len(first.Claims) != 0 {
			t.Fatalf("the first page: as_of %+v, next_cursor %v, %d claims; want a point, more pages and the claims on them", first.AsOf, first.NextCursor, len(first.Claims))
		}
		if raw, _ := json.Marshal(first); !strings.Contains(string(raw), `"as_of":{"event":"`+*first.AsOf.Event+`"`) {
			t.Errorf("the first page's JSON does not say its as_of: %s", raw)
		}

		// Writes between the pages: the thread answered and its answer confirmed, messages
		// sent, claims superseded, refuted and attested, new claims.
		writes := []func(){
			func() {
				send(t, svc, bob, envelope("answer", th, "8080 and 8082 answer."))
				mustClaim(t, svc, alice, "assert", `{"thread":"`+th+`","statement":"port 8080 is closed","evidence":`+proof+`,"supersedes":["`+claims[0]+`"]}`)
				mustClaim(t, svc, carol, "refute", `{"claim":"`+claims[1]+`","evidence":`+proof+`,"body":"it times out"}`)
			},
			func() {
				if _, err := svc.Confirm(ctx, mod, []byte(`{"thread":"`+th+`"}`)); err != nil {
					t.Fatal(err)
				}
				mustClaim(t, svc, carol, "attest", `{"claim":"`+claims[2]+`","evidence":`+proof+`,"note":"it answered me too"}`)
				mustClaim(t, svc, carol, "refute", `{"claim":"`+claims[6]+`","evidence":`+proof+`,"body":"refused"}`)
				mustClaim(t, svc, alice, "assert", `{"thread":"`+th+`","statement":"port 9001 is open","evidence":`+proof+`}`)
			},
			func() {
				send(t, svc, carol, envelope("note", th, "One more port: 9002."))
				mustClaim(t, svc, alice, "assert", `{"thread":"`+th+`","statement":"port 8085 is closed","evidence":`+proof+`,"supersedes":["`+claims[5]+`"]}`)
				mustClaim(t, svc, bob, "attest", `{"claim":"`+claims[3]+`","evidence":`+proof+`,"note":"still open"}`)
			},
		}
		pages := []*protocol.ReadThreadResult{first}
		for cursor := first.NextCursor; cursor != nil; {
			if len(writes) > 0 {
				writes[0]()
				writes = writes[1:]
			}
			page, err := svc.ReadThread(ctx, reader, []byte(`{"thread":"`+th+`","cursor":"`+*cursor+`"}`))
			if err != nil {
				t.Fatal(err)
			}
			pages = append(pages, page)
			cursor = page.NextCursor
		}
		if len(writes) > 0 {
			t.Errorf("%d pages; want more, so that every write comes between two of them", len(pages))
		}

		got, want := describeThread(pages...), describeThread(held)
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("the pages give another thread than the first page's snapshot held:\n%s", diffLines(got, want))
		}
		for i, p := range pages {
			if jsonOf(p.Thread) != jsonOf(held.Thread) {
				t.Errorf("page %d says the thread is %s; the first page's snapshot held %s", i+1, jsonOf(p.Thread), jsonOf(held.Thread))
			}
			if p.AsOf == nil || *p.AsOf.Event != *first.AsOf.Event || *p.AsOf.Stance != *first.AsOf.Stance || !p.AsOf.At.Equal(first.AsOf.At) {
				t.Errorf("page %d says as_of %+v, the first page %+v", i+1, p.AsOf, first.AsOf)
			}
		}

		// Read again from the start, the thread is the new one, at a new point.
		again := readThread(t, whole, th)
		if *again.AsOf.Event == *first.AsOf.Event || again.Thread.State != protocol.StateAnswered || again.Thread.MessageCount != held.Thread.MessageCount+3 {
			t.Errorf("a read from the start after the writes: as_of %s (the first page's %s), thread %s", *again.AsOf.Event, *first.AsOf.Event, jsonOf(again.Thread))
		}
	})
}

// The thread a later page shows is the thread as the first page's point held it, whatever
// its history before the point and whatever happened to it after: its state, origin and
// confirmation, whose turn it is and who set it, its count of messages and its time — read
// from its record (the messages and events up to the point), one case for each way a thread
// changes. Its room is the one it is in now: a thread moved after the point shows its new
// room, and who may read it is decided there.
func TestReadThreadPagesShowTheThreadAsItWas(t *testing.T) {
	alice, bob, carol := agent("alice", "read,write"), agent("bob", "read,write"), agent("carol", "read,write")
	mod, hanna := agent("mod", "read,write,lock"), human("root")
	type step func(t *testing.T, svc *protocol.Service, th, root string)
	sends := func(a *protocol.Actor, kind, body string, more ...any) step {
		return func(t *testing.T, svc *protocol.Service, th, root string) {
			for i := range more {
				if more[i] == "$root" {
					more[i] = root
				}
			}
			send(t, svc, a, envelope(kind, th, body, more...))
		}
	}
	moderates := func(a *protocol.Actor, op, input string) step {
		return func(t *testing.T, svc *protocol.Service, th, _ string) {
			ops := map[string]func(context.Context, *protocol.Actor, []byte) (*protocol.ModerationResult, error){
				"confirm": svc.Confirm, "mark": svc.Mark, "move": svc.MoveThread}
			if _, err := ops[op](context.Background(), a, []byte(`{"thread":"`+th+`"`+input+`}`)); err != nil {
				t.Fatalf("%s %s: %v", op, input, err)
			}
		}
	}
	answered := sends(bob, "answer", "8080 answers.")
	cases := []struct {
		name          string
		before, after []step
	}{
		{"opened, then answered", nil, []step{answered}},
		{"answered, then confirmed", []step{answered}, []step{moderates(mod, "confirm", ""), sends(carol, "note", "Confirmed.")}},
		{"answered and confirmed, then decided by its creator", []step{answered, moderates(mod, "confirm", "")}, []step{sends(alice, "decide", "We keep 8080.")}},
		{"decided by a lock holder, then marked by a human", []step{answered, sends(mod, "decide", "8080 it is.")}, []step{moderates(hanna, "mark", `,"state":"open"`)}},
		{"marked deferred, then marked open", []step{moderates(hanna, "mark", `,"state":"deferred"`)}, []step{moderates(hanna, "mark", `,"state":"open"`)}},
		{"closed and confirmed, then reopened", []step{answered, sends(mod, "close", "Settled.")}, []step{sends(hanna, "reopen", "Not settled.")}},
		{"asked back, then answered", []step{sends(bob, "ask", "Which gateway?", "parent", "$root")}, []step{sends(alice, "answer", "The outer one.")}},
		{"noted, then asked back", []step{sends(carol, "note", "Only a note.")}, []step{sends(bob, "ask", "Which gateway?", "parent", "$root"), sends(carol, "note", "Another note.")}},
		{"opened, then moved", nil, []step{moderates(hanna, "move", `,"room":"research"`), sends(carol, "note", "Moved.")}},
	}
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		ctx := context.Background()
		if _, err := db.CreateAdmin(ctx, "root", "$argon2id$x"); err != nil {
			t.Fatal(err)
		}
		svc := protocol.New(db, protocol.Options{Limits: generous(), ReadPageBytes: 1500})
		whole := protocol.New(db, protocol.Options{Limits: generous()})
		if _, err := svc.CreateRoom(ctx, hanna, []byte(`{"name":"research","title":"Research"}`)); err != nil {
			t.Fatal(err)
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				opened := send(t, svc, alice, envelope("ask", "", "Which port does the gateway use? "+c.name))
				th, root := opened.Thread.ID, opened.Message.ID
				for i := range 4 {
					send(t, svc, carol, envelope("note", th, fmt.Sprintf("Note %d: what the gateway answered on each port, one line a port, as seen from outside.", i)))
				}
				for _, s := range c.before {
					s(t, svc, th, root)
				}
				first := readThread(t, svc, th)
				if first.NextCursor == nil {
					t.Fatalf("one page; want more")
				}
				heldMessages := map[string]bool{}
				for _, m := range flatten(readThread(t, whole, th).Messages) {
					heldMessages[m.ID] = true
				}
				for _, s := range c.after {
					s(t, svc, th, root)
				}
				now := thread(t, svc, th)
				if jsonOf(now) == jsonOf(first.Thread) {
					t.Fatalf("the thread did not change after the first page: %s", jsonOf(now))
				}
				page, err := svc.ReadThread(ctx, reader, []byte(`{"thread":"`+th+`","cursor":"`+*first.NextCursor+`"}`))
				if err != nil {
					t.Fatal(err)
				}
				want := *first.Thread
				want.Room = now.Room
				if jsonOf(page.Thread) != jsonOf(&want) {
					t.Errorf("the second page says the thread is\n  %s\nthe first page said\n  %s\nnow it is\n  %s", jsonOf(page.Thread), jsonOf(&want), jsonOf(now))
				}
				for _, m := range flatten(page.Messages) {
					if !heldMessages[m.ID] {
						t.Errorf("the second page carries %s (%q), written after the first page", m.ID, m.Body)
					}
				}
			})
		}
	})
}

// writeHeldNote writes a note to thread, under its root message, as send writes one: the
// message, and the thread with one more message, its awaiting kept.
func writeHeldNote(ctx context.Context, f *storage.Forum, thread, root int64) error {
	t, err := f.ThreadForUpdate(ctx, thread)
	if err != nil {
		return err
	}
	now := storage.Now()
	m := &storage.Message{ThreadID: thread, ParentID: &root, Depth: 1, AskID: &root, Kind: "note", Identity: "ainotes:held",
		AuthorKind: "llm", Body: "held back", CreatedAt: now, AwaitingMode: t.AwaitingMode, AwaitingIdentity: t.AwaitingIdentity,
		AwaitingExtension: t.AwaitingExtension, AwaitingSetBy: t.AwaitingSetBy}
	t.MessageCount++
	t.UpdatedAt = now
	return f.WriteMessage(ctx, storage.MessageWrite{Message: m, Thread: t})
}

// describeThread is every message, claim and stance of the pages, one line each, sorted:
// each as its JSON, a claim without its stances (once, where it begins), a stance with its
// claim.
func describeThread(pages ...*protocol.ReadThreadResult) []string {
	var out []string
	for _, p := range pages {
		for _, m := range flatten(p.Messages) {
			v := *m
			v.Replies = nil
			out = append(out, "message "+jsonOf(&v))
		}
		for _, c := range p.Claims {
			for _, st := range append(append(c.Attestations, c.Refutations...), c.Verifications...) {
				out = append(out, "stance of "+c.ID+" "+jsonOf(st))
			}
			if c.Continued {
				continue
			}
			head := *c
			head.Attestations, head.Refutations, head.Verifications = nil, nil, nil
			out = append(out, "claim "+jsonOf(&head))
		}
	}
	sort.Strings(out)
	return out
}
