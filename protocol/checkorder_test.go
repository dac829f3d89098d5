package protocol_test

import (
	"context"
	"strings"
	"testing"

	"github.com/parleyforum/parley/protocol"
	"github.com/parleyforum/parley/storage"
	"github.com/parleyforum/parley/storage/storagetest"
)

// § 9: checks run in one order and the first that fails answers: authentication → envelope →
// token right → existence → thread_closed (all but reopen) → authority → self_reply →
// transition → limits (thread size and depth, then the write rate). Every request below has
// two or more faults.

// The forum of the check-order tests. sam creates every thread and has spent his writes;
// bob and carol have not; T names the threads, M the messages:
//
//	open:     sam's ask (open)
//	full:     sam's ask, bob's answer, carol's and mod's notes (answered, thread_max_messages 4
//	          reached)
//	locked:   sam's ask, bob's answer, carol's note, mod's close (confirmed closed, also full)
//	deferred: sam's ask, sam's defer
//	deep:     sam's ask, bob's answer, carol's ask on it (depth 2 = thread_max_depth)
//	other:    bob's ask
type checkForum struct {
	svc      *protocol.Service
	T, M     map[string]string
	actors   map[string]*protocol.Actor
	replacer *strings.Replacer
}

func newCheckForum(t *testing.T, db *storage.DB) *checkForum {
	t.Helper()
	limits := generous()
	limits.ThreadMaxMessages = 4
	limits.ThreadMaxDepth = 2
	// The forum is built through a second service without a rate limit. The budget is the
	// database's, whichever service writes: the service under test allows sam the writes
	// of the build and two more.
	build := newService(t, db)
	samWrites := 0
	f := &checkForum{
		T: map[string]string{},
		M: map[string]string{},
		actors: map[string]*protocol.Actor{
			"nobody": nil, "reader": agent("ro", "read"), "sam": agent("sam", "read,write"),
			"bob": agent("bob", "read,write"), "carol": agent("carol", "read,write"),
			"mod": agent("mod", "read,write,lock"), "ada": human("ada"),
		},
	}
	a := f.actors
	say := func(who, kind, th, body string, more ...any) *protocol.SendResult {
		if who == "sam" {
			samWrites++
		}
		return send(t, build, a[who], envelope(kind, th, body, more...))
	}
	opened := func(name string) string {
		res := say("sam", "ask", "", "the "+name+" thread")
		f.T[name], f.M[name+".root"] = res.Thread.ID, res.Message.ID
		return res.Thread.ID
	}
	opened("open")
	full := opened("full")
	say("bob", "answer", full, "an answer")
	say("carol", "note", full, "a note")
	say("mod", "note", full, "another note")
	locked := opened("locked")
	say("bob", "answer", locked, "an answer")
	say("carol", "note", locked, "a note")
	say("mod", "close", locked, "closed by a moderator")
	say("sam", "defer", opened("deferred"), "parked")
	deep := opened("deep")
	d1 := say("bob", "answer", deep, "depth 1")
	f.M["deep.1"] = d1.Message.ID
	f.M["deep.2"] = say("carol", "ask", "", "depth 2", "parent", d1.Message.ID).Message.ID
	other := say("bob", "ask", "", "bob's thread")
	f.T["other"], f.M["other.root"] = other.Thread.ID, other.Message.ID
	limits.WritesPerMinute = samWrites + 2
	f.svc = newService(t, db, limits)
	// sam spends his two writes on the service under test.
	for i := range 2 {
		send(t, f.svc, a["sam"], envelope("ask", "", "sam's write "+itoa(i)))
	}
	var pairs []string
	for k, v := range f.T {
		pairs = append(pairs, "T:"+k, v)
	}
	for k, v := range f.M {
		pairs = append(pairs, "M:"+k, v)
	}
	f.replacer = strings.NewReplacer(pairs...)
	return f
}

func TestCheckOrder(t *testing.T) {
	const bad = `,"colour":"red"` // an envelope fault added to a valid envelope
	cases := []struct {
		name, who, env string
		want           protocol.Reason
	}{
		{"no token, a bad envelope", "nobody", `{"kind":"vote","body":""}`, protocol.ReasonUnauthenticated},
		{"no token, a closed thread", "nobody", `{"kind":"note","thread":"T:locked","body":"b"}`, protocol.ReasonUnauthenticated},
		{"read only, a bad envelope", "reader", `{"kind":"note","thread":"T:open","body":"b"` + bad + `}`, protocol.ReasonInvalidBody},
		{"read only, an empty body and an unknown thread", "reader", `{"kind":"note","thread":"th_999","body":" "}`, protocol.ReasonInvalidBody},
		{"spent, a bad envelope", "sam", `{"kind":"ask","body":"b"` + bad + `}`, protocol.ReasonInvalidBody},
		{"a bad envelope on a closed thread", "bob", `{"kind":"note","thread":"T:locked","body":"b"` + bad + `}`, protocol.ReasonInvalidBody},
		{"a non-ask without thread, no right", "reader", `{"kind":"decide","body":"b"}`, protocol.ReasonInvalidBody},
		{"read only, an unknown thread", "reader", `{"kind":"note","thread":"th_999","body":"b"}`, protocol.ReasonTokenRightMissing},
		{"read only, a closed thread", "reader", `{"kind":"note","thread":"T:locked","body":"b"}`, protocol.ReasonTokenRightMissing},
		{"read only, an opening ask", "reader", `{"kind":"ask","body":"b"}`, protocol.ReasonTokenRightMissing},
		{"an unknown thread, no authority", "bob", `{"kind":"decide","thread":"th_999","body":"b"}`, protocol.ReasonNotFound},
		{"an unknown parent, a closed thread", "bob", `{"kind":"note","thread":"T:locked","parent":"msg_9999","body":"b"}`, protocol.ReasonNotFound},
		{"a parent of another thread, a closed thread", "mod", `{"kind":"note","thread":"T:locked","parent":"M:other.root","body":"b"}`, protocol.ReasonNotFound},
		{"a parent of another thread, self reply, spent", "sam", `{"kind":"note","thread":"T:open","parent":"M:full.root","body":"b"}`, protocol.ReasonNotFound},
		{"an unknown parent alone, spent", "sam", `{"kind":"note","parent":"msg_9999","body":"b"}`, protocol.ReasonNotFound},
		{"closed, no authority", "bob", `{"kind":"decide","thread":"T:locked","body":"b"}`, protocol.ReasonThreadClosed},
		{"closed, self reply, full, spent", "sam", `{"kind":"note","thread":"T:locked","body":"b"}`, protocol.ReasonThreadClosed},
		{"closed, invalid transition", "sam", `{"kind":"close","thread":"T:locked","body":"b"}`, protocol.ReasonThreadClosed},
		{"closed, a human", "ada", `{"kind":"answer","thread":"T:locked","body":"b"}`, protocol.ReasonThreadClosed},
		{"closed, reached through its parent", "bob", `{"kind":"note","parent":"M:locked.root","body":"b"}`, protocol.ReasonThreadClosed},
		{"reopen skips thread_closed: no authority", "bob", `{"kind":"reopen","thread":"T:locked","body":"b"}`, protocol.ReasonThreadAuthorityMissing},
		{"no authority, invalid transition", "bob", `{"kind":"close","thread":"T:open","body":"b"}`, protocol.ReasonThreadAuthorityMissing},
		{"no authority, full", "bob", `{"kind":"defer","thread":"T:full","body":"b"}`, protocol.ReasonThreadAuthorityMissing},
		{"no authority, invalid reopen", "carol", `{"kind":"reopen","thread":"T:open","body":"b"}`, protocol.ReasonThreadAuthorityMissing},
		{"the creator's reopen of a side state, spent", "sam", `{"kind":"reopen","thread":"T:deferred","body":"b"}`, protocol.ReasonThreadAuthorityMissing},
		{"self reply, full, spent", "sam", `{"kind":"note","thread":"T:full","body":"b"}`, protocol.ReasonSelfReply},
		{"self reply, too deep", "carol", `{"kind":"answer","parent":"M:deep.2","body":"b"}`, protocol.ReasonSelfReply},
		{"self reply on a side state, spent", "sam", `{"kind":"ask","thread":"T:deferred","body":"b"}`, protocol.ReasonSelfReply},
		{"invalid transition, spent", "sam", `{"kind":"close","thread":"T:open","body":"b"}`, protocol.ReasonInvalidTransition},
		{"invalid transition on a side state, spent", "sam", `{"kind":"decide","thread":"T:deferred","body":"b"}`, protocol.ReasonInvalidTransition},
		{"invalid transition, full", "sam", `{"kind":"reopen","thread":"T:full","body":"b"}`, protocol.ReasonInvalidTransition},
		{"a moderator's invalid transition, full", "mod", `{"kind":"reopen","thread":"T:full","body":"b"}`, protocol.ReasonInvalidTransition},
		{"full, spent", "sam", `{"kind":"close","thread":"T:full","body":"b"}`, protocol.ReasonLimitExceeded},
		{"the creator reopens a full closed thread, spent", "sam", `{"kind":"reopen","thread":"T:locked","body":"b"}`, protocol.ReasonLimitExceeded},
		{"too deep, spent", "sam", `{"kind":"answer","parent":"M:deep.2","body":"b"}`, protocol.ReasonLimitExceeded},
		{"full, a human", "ada", `{"kind":"close","thread":"T:full","body":"b"}`, protocol.ReasonLimitExceeded},
		{"spent", "sam", `{"kind":"ask","body":"b"}`, protocol.ReasonRateLimited},
		{"spent, in a thread", "sam", `{"kind":"answer","thread":"T:deep","parent":"M:deep.1","body":"b"}`, protocol.ReasonRateLimited},
		{"spent, in another's thread", "sam", `{"kind":"note","thread":"T:other","body":"b"}`, protocol.ReasonRateLimited},
	}
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		f := newCheckForum(t, db)
		before := census(t, f.svc)
		for _, c := range cases {
			env := f.replacer.Replace(c.env)
			res, err := f.svc.Send(context.Background(), f.actors[c.who], []byte(env))
			if err == nil {
				t.Errorf("%s: %s by %s accepted as %s, want %s", c.name, env, c.who, res.Message.ID, c.want)
				continue
			}
			e := refusal(t, err)
			if e.Reason != c.want {
				t.Errorf("%s: %s by %s refused with %s (%s), want %s", c.name, env, c.who, e.Reason, e.Message, c.want)
			}
			if strings.Contains(c.name, "too deep") && e.Reason == protocol.ReasonLimitExceeded && !strings.Contains(e.Message, "thread_max_depth") {
				t.Errorf("%s: %s", c.name, e.Message)
			}
		}
		if after := census(t, f.svc); after != before {
			t.Fatalf("refusals wrote: %+v -> %+v", before, after)
		}
	})
}

// The same order for confirm and mark: authentication → input → right → existence →
// thread_closed → transition.
func TestCheckOrderOfModeration(t *testing.T) {
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		f := newCheckForum(t, db)
		ctx := context.Background()
		type op func(context.Context, *protocol.Actor, []byte) (*protocol.ModerationResult, error)
		cases := []struct {
			name, op, who, body string
			want                protocol.Reason
		}{
			{"confirm: no token, a bad body", "confirm", "nobody", `{"thread":"msg_1"}`, protocol.ReasonUnauthenticated},
			{"confirm: no lock, a bad body", "confirm", "bob", `{"thread":"T:open","x":1}`, protocol.ReasonInvalidBody},
			{"confirm: no lock, an unknown thread", "confirm", "bob", `{"thread":"th_999"}`, protocol.ReasonTokenRightMissing},
			{"confirm: the creator without lock, a closed thread", "confirm", "sam", `{"thread":"T:locked"}`, protocol.ReasonTokenRightMissing},
			{"confirm: an unknown thread", "confirm", "mod", `{"thread":"th_999"}`, protocol.ReasonNotFound},
			{"confirm: closed and already confirmed", "confirm", "mod", `{"thread":"T:locked"}`, protocol.ReasonThreadClosed},
			{"confirm: closed, a human", "confirm", "ada", `{"thread":"T:locked"}`, protocol.ReasonThreadClosed},
			{"confirm: already confirmed", "confirm", "ada", `{"thread":"T:open"}`, protocol.ReasonInvalidTransition},
			{"mark: no token, a bad state", "mark", "nobody", `{"thread":"T:open","state":"gone"}`, protocol.ReasonUnauthenticated},
			{"mark: a model, a bad state", "mark", "mod", `{"thread":"T:open","state":"gone"}`, protocol.ReasonInvalidBody},
			{"mark: a model, an unknown thread", "mark", "mod", `{"thread":"th_999","state":"open"}`, protocol.ReasonTokenRightMissing},
			{"mark: a model, a closed thread", "mark", "sam", `{"thread":"T:locked","state":"open"}`, protocol.ReasonTokenRightMissing},
			{"mark: a human, an unknown thread, a bad field", "mark", "ada", `{"thread":"th_999","state":"open","why":"x"}`, protocol.ReasonInvalidBody},
			{"mark: a human, an unknown thread", "mark", "ada", `{"thread":"th_999","state":"open"}`, protocol.ReasonNotFound},
			{"mark: a human, a closed thread", "mark", "ada", `{"thread":"T:locked","state":"open"}`, protocol.ReasonThreadClosed},
		}
		ops := map[string]op{"confirm": f.svc.Confirm, "mark": f.svc.Mark}
		for _, c := range cases {
			body := f.replacer.Replace(c.body)
			_, err := ops[c.op](ctx, f.actors[c.who], []byte(body))
			if err == nil {
				t.Errorf("%s: accepted, want %s", c.name, c.want)
				continue
			}
			if e := refusal(t, err); e.Reason != c.want {
				t.Errorf("%s: %s by %s refused with %s (%s), want %s", c.name, body, c.who, e.Reason, e.Message, c.want)
			}
		}
	})
}

// The manifest states the same order.
func TestManifestCheckOrder(t *testing.T) {
	got := protocol.New(nil, protocol.Options{}).Manifest(nil).CheckOrder
	want := []string{"payload_too_large", "unauthenticated", "invalid_body", "token_right_missing", "not_found",
		"thread_closed", "thread_authority_missing", "self_reply", "invalid_transition", "limit_exceeded", "rate_limited"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("check_order %v, want %v", got, want)
	}
}
