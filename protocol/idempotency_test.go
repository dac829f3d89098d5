package protocol_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/parleyforum/parley/migrations"
	"github.com/parleyforum/parley/protocol"
	"github.com/parleyforum/parley/storage"
	"github.com/parleyforum/parley/storage/storagetest"
)

// keyed runs one write under an idempotency key, as a transport does.
func keyed(svc *protocol.Service, a *protocol.Actor, key, operation, input string, run func(context.Context, *protocol.Actor, []byte) (any, error)) (any, error) {
	return svc.Idempotently(context.Background(), a, key, operation, []byte(input), func(ctx context.Context) (any, error) {
		return run(ctx, a, []byte(input))
	})
}

func sendOp(svc *protocol.Service) func(context.Context, *protocol.Actor, []byte) (any, error) {
	return func(ctx context.Context, a *protocol.Actor, raw []byte) (any, error) { return svc.Send(ctx, a, raw) }
}

// body is an answer's JSON, a replay's as it was stored.
func body(t *testing.T, v any) []byte {
	t.Helper()
	if r, ok := v.(*protocol.Replayed); ok {
		return r.Body()
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}

func TestIdempotencyKeyReplaysAndConflicts(t *testing.T) {
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		svc := newService(t, db)
		alice, bob := agent("alice", "read,write"), agent("bob", "read,write")
		ask := send(t, svc, alice, envelope("ask", "", "Which limit applies?"))
		th := ask.Thread.ID
		answer := envelope("answer", th, "The thread's.")

		first, err := keyed(svc, bob, "answer-1", "send", answer, sendOp(svc))
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := first.(*protocol.Replayed); ok {
			t.Fatal("the first write is answered as a replay")
		}
		// Without its key, the retry is bob replying to himself (the answer's default parent
		// is now his own message): the key answers before that check.
		refuse(t, svc, bob, answer, protocol.ReasonSelfReply)
		again, err := keyed(svc, bob, "answer-1", "send", `{ "body": "The thread's.", "thread": "`+th+`", "kind": "answer" }`, sendOp(svc))
		if err != nil {
			t.Fatalf("the retry: %v", err)
		}
		if _, ok := again.(*protocol.Replayed); !ok {
			t.Fatalf("the retry is answered as %T, not as a replay", again)
		}
		if !bytes.Equal(body(t, first), body(t, again)) {
			t.Errorf("the replay answers\n%s\nthe first answer was\n%s", body(t, again), body(t, first))
		}
		if n := readThread(t, svc, th).Thread.MessageCount; n != 2 {
			t.Errorf("the thread has %d messages after a retried answer, want 2", n)
		}

		// Another input, another operation: a conflict, and nothing written.
		_, err = keyed(svc, bob, "answer-1", "send", envelope("answer", th, "Another text."), sendOp(svc))
		wantRefused(t, err, protocol.ReasonIdempotencyConflict)
		_, err = keyed(svc, bob, "answer-1", "confirm", `{"thread":"`+th+`"}`, func(ctx context.Context, a *protocol.Actor, raw []byte) (any, error) {
			return svc.Confirm(ctx, a, raw)
		})
		wantRefused(t, err, protocol.ReasonIdempotencyConflict)
		if n := readThread(t, svc, th).Thread.MessageCount; n != 2 {
			t.Errorf("the thread has %d messages after two conflicts, want 2", n)
		}

		// A key is the identity's own: alice's "answer-1" is another key.
		if _, err := keyed(svc, alice, "answer-1", "send", envelope("answer", th, "Thanks."), sendOp(svc)); err != nil {
			t.Errorf("another identity's key of the same name: %v", err)
		}

		// Only successful writes are remembered: a refused write runs again under its key.
		_, err = keyed(svc, bob, "note-1", "send", envelope("note", "th_999", "Lost."), sendOp(svc))
		wantRefused(t, err, protocol.ReasonNotFound)
		if res, err := keyed(svc, bob, "note-1", "send", envelope("note", th, "Found."), sendOp(svc)); err != nil {
			t.Errorf("a key whose write was refused, on another input: %v", err)
		} else if _, ok := res.(*protocol.Replayed); ok {
			t.Error("a refused write was remembered")
		}

		// A malformed key is invalid_body, and nothing is written.
		for _, bad := range []string{"has space", "tab\t", "ü", string(make([]byte, 256))} {
			_, err := keyed(svc, bob, bad, "send", envelope("note", th, "x"), sendOp(svc))
			wantRefused(t, err, protocol.ReasonInvalidBody)
		}
	})
}

func TestIdempotencyKeyOnEveryWrite(t *testing.T) {
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		svc := newService(t, db)
		alice, bob := agent("alice", "read,write"), agent("bob", "read,write")
		moderator := agent("mod", "read,write,lock,verify")
		carol := human("carol")
		ask := send(t, svc, alice, envelope("ask", "", "Which limit applies?"))
		th := ask.Thread.ID
		send(t, svc, bob, envelope("answer", th, "The thread's."))
		asserted := mustClaim(t, svc, alice, "assert", `{"thread":"`+th+`","statement":"It holds.","evidence":`+proof+`}`)
		cl := asserted.ID
		if _, err := db.CreateAdmin(context.Background(), "root", "$argon2id$x"); err != nil {
			t.Fatal(err)
		}
		root := human("root")
		msg := ask.Message.ID
		op := func(f func(context.Context, *protocol.Actor, []byte) (*protocol.ClaimResult, error)) func(context.Context, *protocol.Actor, []byte) (any, error) {
			return func(ctx context.Context, a *protocol.Actor, raw []byte) (any, error) { return f(ctx, a, raw) }
		}
		writes := []struct {
			name, input string
			actor       *protocol.Actor
			run         func(context.Context, *protocol.Actor, []byte) (any, error)
		}{
			{"claim_assert", `{"thread":"` + th + `","statement":"It holds too.","evidence":` + proof + `}`, alice, op(svc.Assert)},
			{"claim_attest", `{"claim":"` + cl + `","evidence":` + proof + `}`, bob, op(svc.Attest)},
			{"claim_verify", `{"claim":"` + cl + `","evidence":` + proof + `}`, moderator, op(svc.Verify)},
			{"claim_refute", `{"claim":"` + cl + `","evidence":` + proof + `,"body":"It does not."}`, bob, op(svc.Refute)},
			{"claim_mark", `{"claim":"` + cl + `","state":"supported"}`, carol, op(svc.MarkClaim)},
			{"confirm", `{"thread":"` + th + `"}`, moderator, func(ctx context.Context, a *protocol.Actor, raw []byte) (any, error) { return svc.Confirm(ctx, a, raw) }},
			{"mark", `{"thread":"` + th + `","state":"decided"}`, carol, func(ctx context.Context, a *protocol.Actor, raw []byte) (any, error) { return svc.Mark(ctx, a, raw) }},
			{"key_register", `{"public_key":"11qYAYKxCrfVS/7TyWQHOg7hcvPapiMlrwIaaPcHURo="}`, bob, func(ctx context.Context, a *protocol.Actor, raw []byte) (any, error) {
				return svc.RegisterKey(ctx, a, raw)
			}},
			{"artifact_put", `{"content_base64":"UEFTUwo=","media_type":"text/plain"}`, bob, func(ctx context.Context, a *protocol.Actor, raw []byte) (any, error) {
				return svc.PutArtifactInput(ctx, a, raw)
			}},
			{"message_hide", `{"message":"` + msg + `","reason":"leaked"}`, moderator, func(ctx context.Context, a *protocol.Actor, raw []byte) (any, error) {
				return svc.Hide(ctx, a, raw)
			}},
			{"message_unhide", `{"message":"` + msg + `"}`, moderator, func(ctx context.Context, a *protocol.Actor, raw []byte) (any, error) {
				return svc.Unhide(ctx, a, raw)
			}},
			{"room_create", `{"name":"research","title":"Research"}`, root, func(ctx context.Context, a *protocol.Actor, raw []byte) (any, error) {
				return svc.CreateRoom(ctx, a, raw)
			}},
			{"room_update", `{"room":"research","title":"Research, renamed"}`, root, func(ctx context.Context, a *protocol.Actor, raw []byte) (any, error) {
				return svc.UpdateRoom(ctx, a, raw)
			}},
			{"thread_move", `{"thread":"` + th + `","room":"research"}`, root, func(ctx context.Context, a *protocol.Actor, raw []byte) (any, error) {
				return svc.MoveThread(ctx, a, raw)
			}},
		}
		for _, w := range writes {
			before := census(t, svc)
			key := "k-" + w.name
			first, err := keyed(svc, w.actor, key, w.name, w.input, w.run)
			if err != nil {
				t.Fatalf("%s: %v", w.name, err)
			}
			mid := census(t, svc)
			again, err := keyed(svc, w.actor, key, w.name, w.input, w.run)
			if err != nil {
				t.Fatalf("%s retried: %v", w.name, err)
			}
			if _, ok := again.(*protocol.Replayed); !ok {
				t.Errorf("%s retried: answered as %T, not as a replay", w.name, again)
			}
			if !bytes.Equal(body(t, first), body(t, again)) {
				t.Errorf("%s: the replay answers\n%s\nthe first answer was\n%s", w.name, body(t, again), body(t, first))
			}
			if after := census(t, svc); after != mid {
				t.Errorf("%s: the retry wrote: %+v, then %+v", w.name, mid, after)
			}
			_ = before
		}
	})
}

// TestIdempotencyKeyRace: sixteen retries of one write, all at once, write once and answer
// alike — over one database handle, and on two handles (two instances of one forum).
func TestIdempotencyKeyRace(t *testing.T) {
	for _, kind := range storagetest.Kinds() {
		t.Run(string(kind), func(t *testing.T) {
			ctx := context.Background()
			url := storagetest.NewURL(t, kind)
			dbs := make([]*storage.DB, 2)
			for i := range dbs {
				db, err := storage.Open(ctx, url)
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { _ = db.Close() })
				dbs[i] = db
			}
			if _, err := migrations.Up(ctx, dbs[0]); err != nil {
				t.Fatal(err)
			}
			svcs := []*protocol.Service{newService(t, dbs[0]), newService(t, dbs[1])}
			alice, bob := agent("alice", "read,write"), agent("bob", "read,write")
			for round := range 3 {
				ask := send(t, svcs[0], alice, envelope("ask", "", fmt.Sprintf("Question %d?", round)))
				th := ask.Thread.ID
				input := envelope("answer", th, "One answer.")
				key := fmt.Sprintf("race-%d", round)
				const retries = 16
				answers := make([][]byte, retries)
				errs := make([]error, retries)
				var wg sync.WaitGroup
				start := make(chan struct{})
				for i := range retries {
					wg.Go(func() {
						<-start
						svc := svcs[i%2]
						res, err := keyed(svc, bob, key, "send", input, sendOp(svc))
						errs[i] = err
						if err == nil {
							answers[i] = body(t, res)
						}
					})
				}
				close(start)
				wg.Wait()
				for i, err := range errs {
					if err != nil {
						t.Fatalf("round %d, retry %d: %v", round, i, err)
					}
					if !bytes.Equal(answers[i], answers[0]) {
						t.Errorf("round %d: retry %d answers\n%s\nretry 0\n%s", round, i, answers[i], answers[0])
					}
				}
				if n := readThread(t, svcs[1], th).Thread.MessageCount; n != 2 {
					t.Errorf("round %d: %d messages after %d racing retries of one answer, want 2", round, n, retries)
				}
			}
		})
	}
}

func TestIdempotencyKeysAreSwept(t *testing.T) {
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		ctx := context.Background()
		svc := newService(t, db)
		old := storage.Now().Add(-25 * time.Hour)
		for i := range 1203 {
			k := &storage.IdempotencyKey{Identity: "ainotes:bob", Key: fmt.Sprint("old-", i), Operation: "send", InputSHA256: "x", Body: "{}", CreatedAt: old}
			if _, err := db.NewInsert().Model(k).Exec(ctx); err != nil {
				t.Fatal(err)
			}
		}
		young := &storage.IdempotencyKey{Identity: "ainotes:bob", Key: "young", Operation: "send", InputSHA256: "x", Body: "{}", CreatedAt: storage.Now().Add(-23 * time.Hour)}
		if _, err := db.NewInsert().Model(young).Exec(ctx); err != nil {
			t.Fatal(err)
		}
		// A key whose id came after the young one's and whose time is older (a write that
		// committed late) goes with the batch it is in: the sweep reads the keys in the
		// order of their ids, and removes those past their time.
		late := &storage.IdempotencyKey{Identity: "ainotes:bob", Key: "late", Operation: "send", InputSHA256: "x", Body: "{}", CreatedAt: old}
		if _, err := db.NewInsert().Model(late).Exec(ctx); err != nil {
			t.Fatal(err)
		}
		n, err := svc.SweepIdempotencyKeys(ctx)
		if err != nil || n != 1204 {
			t.Fatalf("swept %d keys (%v), want 1204", n, err)
		}
		var left []string
		if err := db.NewSelect().Model((*storage.IdempotencyKey)(nil)).Column("key").Order("id").Scan(ctx, &left); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(left, []string{"young"}) {
			t.Fatalf("keys left %q, want the young one", left)
		}
	})
}

func TestParseIdempotencyKeyHeader(t *testing.T) {
	for _, c := range []struct {
		in   []string
		want string
		bad  bool
	}{
		{nil, "", false},
		{[]string{"abc-123"}, "abc-123", false},
		{[]string{`"abc-123"`}, "abc-123", false},
		{[]string{` "a\"b\\c" `}, `a"b\c`, false},
		{[]string{`"a b"`}, "", true},
		{[]string{`"abc`}, "", true},
		{[]string{`"a"b`}, "", true},
		{[]string{`"a\nb"`}, "", true},
		{[]string{""}, "", true},
		{[]string{"a", "b"}, "", true},
		{[]string{"ключ"}, "", true},
	} {
		got, err := protocol.ParseIdempotencyKeyHeader(c.in)
		if c.bad {
			wantRefused(t, err, protocol.ReasonInvalidBody)
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("%q: %q, %v; want %q", c.in, got, err, c.want)
		}
	}
}
