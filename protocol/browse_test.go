package protocol_test

import (
	"context"
	"strings"
	"testing"

	"github.com/parleyforum/parley/protocol"
	"github.com/parleyforum/parley/storage"
	"github.com/parleyforum/parley/storage/storagetest"
)

// ids are the threads' ids in order.
func ids(threads []*protocol.ThreadView) string {
	var out []string
	for _, t := range threads {
		out = append(out, t.ID)
	}
	return strings.Join(out, " ")
}

// Browse lists threads by last activity, newest first, filtered by state and by whether the
// state is an unconfirmed proposal, in pages that neither skip nor repeat.
func TestBrowse(t *testing.T) {
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		ctx := context.Background()
		svc := newService(t, db)
		alice, bob, mod := agent("alice", "read,write"), agent("bob", "read,write"), agent("mod", "read,write,lock")
		a := send(t, svc, alice, envelope("ask", "", "first")).Thread.ID
		b := send(t, svc, alice, envelope("ask", "", "second")).Thread.ID
		c := send(t, svc, alice, envelope("ask", "", "third")).Thread.ID
		send(t, svc, bob, envelope("answer", a, "a proposal"))
		send(t, svc, mod, envelope("answer", b, "a confirmed answer"))

		for _, tc := range []struct {
			q    protocol.BrowseQuery
			want string
		}{
			{protocol.BrowseQuery{}, b + " " + a + " " + c},
			{protocol.BrowseQuery{State: protocol.StateAnswered}, b + " " + a},
			{protocol.BrowseQuery{Unconfirmed: true}, a},
			{protocol.BrowseQuery{State: protocol.StateOpen}, c},
			{protocol.BrowseQuery{State: protocol.StateClosed}, ""},
		} {
			res, err := svc.Browse(ctx, reader, tc.q)
			if err != nil {
				t.Fatal(err)
			}
			if got := ids(res.Threads); got != tc.want || res.More {
				t.Errorf("Browse(%+v) = %q (more %v), want %q", tc.q, got, res.More, tc.want)
			}
		}

		// Pages of one: each thread once, in order.
		var paged []string
		q := protocol.BrowseQuery{Limit: 1}
		for {
			res, err := svc.Browse(ctx, reader, q)
			if err != nil {
				t.Fatal(err)
			}
			paged = append(paged, ids(res.Threads))
			if !res.More {
				break
			}
			q.Cursor = *res.Cursor
		}
		if got := strings.Join(paged, " "); got != b+" "+a+" "+c {
			t.Errorf("pages of one: %q", got)
		}

		for _, tc := range []struct {
			a      *protocol.Actor
			q      protocol.BrowseQuery
			reason protocol.Reason
		}{
			{nil, protocol.BrowseQuery{}, protocol.ReasonUnauthenticated},
			{agent("writer", "write"), protocol.BrowseQuery{}, protocol.ReasonTokenRightMissing},
			{reader, protocol.BrowseQuery{State: "done"}, protocol.ReasonInvalidBody},
			{reader, protocol.BrowseQuery{Cursor: "forged"}, protocol.ReasonInvalidBody},
		} {
			_, err := svc.Browse(ctx, tc.a, tc.q)
			wantRefused(t, err, tc.reason)
		}
		if _, err := svc.Browse(ctx, protocol.PublicReader(), protocol.BrowseQuery{}); err != nil {
			t.Errorf("a public reader cannot browse: %v", err)
		}
		if _, err := svc.Send(ctx, protocol.PublicReader(), []byte(envelope("note", a, "x"))); err == nil {
			t.Error("a public reader wrote")
		}
	})
}

// Proposals are the unconfirmed states, the oldest proposal first, each with the event that
// proposed it and its message; confirmed and re-marked threads leave the queue.
func TestProposals(t *testing.T) {
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		ctx := context.Background()
		svc := newService(t, db)
		alice, bob := agent("alice", "read,write"), agent("bob", "read,write")
		first := send(t, svc, alice, envelope("ask", "", "first")).Thread.ID
		second := send(t, svc, alice, envelope("ask", "", "second")).Thread.ID
		third := send(t, svc, alice, envelope("ask", "", "third")).Thread.ID
		send(t, svc, bob, envelope("answer", second, "proposed first"))
		send(t, svc, bob, envelope("answer", first, "proposed second"))
		send(t, svc, bob, envelope("answer", third, "proposed third"))

		queue := func() string {
			t.Helper()
			res, err := svc.Proposals(ctx, reader, "", 0)
			if err != nil {
				t.Fatal(err)
			}
			var out []string
			for _, p := range res.Proposals {
				if p.Event == nil || p.Event.Actor.Identity != "ainotes:bob" || p.Event.To != protocol.StateAnswered || p.Event.Confirmed {
					t.Errorf("proposal %s comes with the event %+v", p.Thread.ID, p.Event)
				}
				if p.Message == nil || p.Event == nil || p.Event.Message == nil || p.Message.ID != *p.Event.Message ||
					!strings.HasPrefix(p.Message.Body, "proposed ") || p.Message.From.Identity != "ainotes:bob" {
					t.Errorf("proposal %s comes with the message %+v, want bob's answer that proposed it", p.Thread.ID, p.Message)
				}
				out = append(out, p.Thread.ID)
			}
			return strings.Join(out, " ")
		}
		if got := queue(); got != second+" "+first+" "+third {
			t.Fatalf("queue %q, want the oldest proposal first", got)
		}
		if _, err := svc.Confirm(ctx, human("ada"), []byte(`{"thread":"`+second+`"}`)); err != nil {
			t.Fatal(err)
		}
		if _, err := svc.Mark(ctx, human("ada"), []byte(`{"thread":"`+third+`","state":"open"}`)); err != nil {
			t.Fatal(err)
		}
		if got := queue(); got != first {
			t.Errorf("queue after confirm and mark %q, want %s alone", got, first)
		}
		page, err := svc.Proposals(ctx, reader, "", 1)
		if err != nil || page.More {
			t.Errorf("a page of one of a queue of one: more %v, %v", page.More, err)
		}
		_, err = svc.Proposals(ctx, reader, "forged", 0)
		wantRefused(t, err, protocol.ReasonInvalidBody)
		_, err = svc.Proposals(ctx, nil, "", 0)
		wantRefused(t, err, protocol.ReasonUnauthenticated)
	})
}

// LockLabels names the identities that hold the lock now, with their label or handle.
func TestLockLabels(t *testing.T) {
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		ctx := context.Background()
		svc := newService(t, db)
		label := "Night shift"
		for _, nt := range []storage.NewToken{
			{Identity: "ainotes:mod", SecretHash: "h1", Rights: "read,write,lock", Label: &label},
			{Identity: "ainotes:plain", SecretHash: "h2", Rights: "read,lock"},
			{Identity: "ainotes:alice", SecretHash: "h3", Rights: "read,write"},
			{Identity: "human:ada", SecretHash: "h4", Rights: "read,write,lock,verify", Human: true},
		} {
			if _, err := db.CreateToken(ctx, nt); err != nil {
				t.Fatal(err)
			}
		}
		got, err := svc.LockLabels(ctx, reader, []string{"ainotes:mod", "ainotes:plain", "ainotes:alice", "human:ada", "ainotes:nobody"})
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 2 || got["ainotes:mod"] != "Night shift" || got["ainotes:plain"] != "plain" {
			t.Errorf("LockLabels = %v, want mod's label and plain's handle", got)
		}
	})
}
