// Package pgbouncer runs Parley through pgbouncer in transaction pooling mode, the way larger
// deployments put many instances in front of one Postgres: every transaction may land on
// another server connection, so nothing may rely on session state between transactions, and
// prepared statements only in the way the pooler supports. The test starts Debian's
// pgbouncer itself (make test installs it); without it the test fails, it never skips.
package pgbouncer

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/parleyforum/parley/migrations"
	"github.com/parleyforum/parley/protocol"
	"github.com/parleyforum/parley/storage"
	"github.com/parleyforum/parley/storage/storagetest"
	"github.com/parleyforum/parley/storage/storagetest/pgcluster"
)

func TestMain(m *testing.M) { storagetest.Main(m) }

// execMode is the query mode docs/operating.md names for pgbouncer before 1.21 (Debian 12
// ships 1.18), which keeps no prepared statements across server connections.
const execMode = "default_query_exec_mode=cache_describe"

// forum is the operation layer over a database reached through pgbouncer, migrated through
// it, with the tokens of its callers.
type forum struct {
	t       *testing.T
	svc     *protocol.Service
	db      *storage.DB
	secrets map[string]string // handle → bearer secret
}

func throughPgBouncer(t *testing.T, handles ...string) *forum {
	t.Helper()
	ctx := context.Background()
	target := storagetest.NewURL(t, storage.Postgres)
	bouncer, err := pgcluster.StartPgBouncer(ctx, target)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("pgbouncer's log:\n%s", bouncer.LogTail())
		}
		_ = bouncer.Stop()
	})
	db, err := storage.Open(ctx, bouncer.URL(target, execMode))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if _, err := migrations.Up(ctx, db); err != nil {
		t.Fatalf("migrating through pgbouncer: %v", err)
	}
	f := &forum{t: t, db: db, secrets: map[string]string{},
		svc: protocol.New(db, protocol.Options{Limits: unlimitedWrites()})}
	for _, h := range handles {
		secret, err := protocol.NewTokenSecret()
		if err != nil {
			t.Fatal(err)
		}
		_, err = db.CreateToken(ctx, storage.NewToken{Identity: "ainotes:" + h, SecretHash: protocol.HashTokenSecret(secret), Rights: "read,write"})
		if err != nil {
			t.Fatal(err)
		}
		f.secrets[h] = secret
	}
	return f
}

func unlimitedWrites() protocol.Limits {
	l := protocol.DefaultLimits()
	l.WritesPerMinute = 1_000_000
	return l
}

// as authenticates handle as every request does: the token lookup is a statement of its own,
// outside any transaction.
func (f *forum) as(handle string) *protocol.Actor {
	a, err := f.svc.AuthenticateHeader(context.Background(), "127.0.0.1", []string{"Bearer " + f.secrets[handle]})
	if err != nil {
		f.t.Fatalf("authenticating %s: %v", handle, err)
	}
	return a
}

func (f *forum) send(handle, envelope string) (*protocol.SendResult, error) {
	return f.svc.Send(context.Background(), f.as(handle), []byte(envelope))
}

func (f *forum) inbox(handle, input string) *protocol.InboxResult {
	f.t.Helper()
	res, err := f.svc.Inbox(context.Background(), f.as(handle), []byte(input))
	if err != nil {
		f.t.Fatalf("inbox of %s %s: %v", handle, input, err)
	}
	return res
}

// A conversation through the pooler gives the same answers as a direct connection.
func TestConversationThroughPgBouncer(t *testing.T) {
	f := throughPgBouncer(t, "alice", "bob")
	start := f.inbox("bob", `{}`).Cursor

	asked, err := f.send("alice", `{"kind":"ask","body":"Which port does parley listen on?"}`)
	if err != nil {
		t.Fatal(err)
	}
	th := asked.Thread.ID
	got := f.inbox("bob", fmt.Sprintf(`{"since":%q,"wait_seconds":5}`, start))
	if len(got.Items) != 1 || got.Items[0].Thread.ID != th {
		t.Fatalf("bob's inbox after the ask: %+v", got.Items)
	}
	if _, err := f.send("bob", fmt.Sprintf(`{"kind":"answer","thread":%q,"body":"8080"}`, th)); err != nil {
		t.Fatal(err)
	}
	_, err = f.send("bob", fmt.Sprintf(`{"kind":"note","thread":%q,"parent":"msg_2","body":"mine"}`, th))
	if e, ok := protocol.AsError(err); !ok || e.Reason != protocol.ReasonSelfReply {
		t.Errorf("bob replying to himself: %v, want self_reply", err)
	}
	mine := f.inbox("alice", `{"wait_seconds":5}`)
	if len(mine.Items) != 1 || mine.Items[0].Message.Kind != "answer" {
		t.Errorf("alice's inbox after the answer: %+v", mine.Items)
	}
	read, err := f.svc.ReadThread(context.Background(), f.as("alice"), []byte(fmt.Sprintf(`{"thread":%q}`, th)))
	if err != nil {
		t.Fatal(err)
	}
	if read.Thread.State != protocol.StateAnswered || read.Thread.MessageCount != 2 {
		t.Errorf("thread after the answer: %s with %d messages", read.Thread.State, read.Thread.MessageCount)
	}
	events, err := f.svc.ReadEvents(context.Background(), f.as("alice"), []byte(fmt.Sprintf(`{"thread":%q}`, th)))
	if err != nil {
		t.Fatal(err)
	}
	if len(events.Events) != 2 || events.Events[1].Act != "answer" || events.Events[1].To != protocol.StateAnswered {
		t.Errorf("events: %+v", events.Events)
	}
}

const (
	agents        = 8  // at once, over a pool of 32 connections to a pooler with 2 server connections
	sendsPerAgent = 15 // an ask of its own, then answers and notes to the others' asks
)

// Many agents send and read their inboxes at once, so that their transactions take turns
// on pgbouncer's few server connections. Every acknowledged message is stored whole, every
// thread's count is its messages and its events replay to its state, and an inbox read from
// the start with the cursors it returns lists every thread awaiting the reader.
func TestConcurrentSendsThroughPgBouncer(t *testing.T) {
	handles := make([]string, agents)
	for i := range handles {
		handles[i] = fmt.Sprintf("agent-%d", i)
	}
	f := throughPgBouncer(t, handles...)

	var (
		mu      sync.Mutex
		acked   = map[string]string{} // message id → body
		threads []string
		wg      sync.WaitGroup
	)
	for i, h := range handles {
		wg.Go(func() {
			cursor := ""
			for n := range sendsPerAgent {
				body := fmt.Sprintf("%s says %d", h, n)
				envelope := fmt.Sprintf(`{"kind":"ask","body":%q}`, body)
				if n > 0 {
					mu.Lock()
					th := threads[(i+n)%len(threads)]
					mu.Unlock()
					envelope = fmt.Sprintf(`{"kind":"note","thread":%q,"body":%q}`, th, body)
				}
				res, err := f.send(h, envelope)
				if e, ok := protocol.AsError(err); ok && e.Reason == protocol.ReasonSelfReply {
					continue // its own thread, whose root is its own
				}
				if err != nil {
					t.Errorf("%s sends %s: %v", h, envelope, err)
					return
				}
				mu.Lock()
				acked[res.Message.ID] = body
				if n == 0 {
					threads = append(threads, res.Thread.ID)
				}
				mu.Unlock()
				in, err := f.svc.Inbox(context.Background(), f.as(h), since(cursor, ""))
				if err != nil {
					t.Errorf("%s reads its inbox: %v", h, err)
					return
				}
				cursor = in.Cursor
			}
		})
		if i == 0 {
			wg.Wait() // the first ask exists before anyone notes under it
		}
	}
	wg.Wait()
	if t.Failed() {
		return
	}

	stored := 0
	for _, th := range threads {
		read, err := f.svc.ReadThread(context.Background(), f.as("agent-0"), []byte(fmt.Sprintf(`{"thread":%q}`, th)))
		if err != nil {
			t.Fatal(err)
		}
		n := countTree(t, read.Messages, acked)
		stored += n
		if n != read.Thread.MessageCount {
			t.Errorf("thread %s: message_count %d, %d messages in its tree", th, read.Thread.MessageCount, n)
		}
		events, err := f.svc.ReadEvents(context.Background(), f.as("agent-0"), []byte(fmt.Sprintf(`{"thread":%q}`, th)))
		if err != nil {
			t.Fatal(err)
		}
		if last := events.Events[len(events.Events)-1]; last.To != read.Thread.State {
			t.Errorf("thread %s: events end at %s, the thread says %s", th, last.To, read.Thread.State)
		}
	}
	if stored != len(acked) {
		t.Errorf("%d messages acknowledged, %d stored", len(acked), stored)
	}

	// Every thread is an open call (an ask awaits anyone but the asker, and notes leave that
	// as it is), which a read without an extension lists, its own included (§ 7): reading from
	// the start with the returned cursors lists them all.
	seen := map[string]bool{}
	cursor := ""
	for page := 0; ; page++ {
		in := f.inbox("agent-1", string(since(cursor, `"limit":3`)))
		for _, item := range in.Items {
			seen[item.Thread.ID] = true
		}
		cursor = in.Cursor
		if !in.More {
			break
		}
		if page > agents {
			t.Fatal("the inbox does not end")
		}
	}
	if len(seen) != agents {
		t.Errorf("agent-1's inbox lists %d threads, want %d: %v", len(seen), agents, seen)
	}
}

// countTree counts the messages of a tree and checks each against what was acknowledged.
func countTree(t *testing.T, ms []*protocol.MessageView, acked map[string]string) int {
	n := 0
	for _, m := range ms {
		if body, ok := acked[m.ID]; !ok || body != m.Body {
			raw, _ := json.Marshal(m)
			t.Errorf("message %s was not acknowledged as stored: %s", m.ID, raw)
		}
		n += 1 + countTree(t, m.Replies, acked)
	}
	return n
}

// since is an inbox read's input: from cursor ("" for the start), with more fields.
func since(cursor, more string) []byte {
	fields := []string{}
	if cursor != "" {
		fields = append(fields, fmt.Sprintf(`"since":%q`, cursor))
	}
	if more != "" {
		fields = append(fields, more)
	}
	return []byte("{" + strings.Join(fields, ",") + "}")
}
