package security

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/parleyforum/parley/protocol"
)

// cast is who prepares the threads of the suite, and who calls in the matrix. The preparing
// identities are never callers of the matrix, so that no caller wrote a message it would
// reply to (self_reply) or attested a claim before (already_attested).
type cast struct {
	// who prepares: the creator opens threads (extension w1) and asserts their claims; an
	// agent answers and attests; a moderator and a human set confirmed states.
	creator, agent, moderator, human *protocol.Actor
	// authorization is the Authorization header of each caller of the matrix, by name.
	authorization map[string]string
	// extension is the extension a caller speaks through, by name.
	extension map[string]string
}

const (
	creatorIdentity = "ainotes:creator"
	openedWith      = "w1" // the extension the creator opened its threads with
	speaksWith      = "w2" // the extension the creator calls the matrix with
)

func newCast(s *server) *cast {
	creatorSecret, creator := s.token(creatorIdentity, false, "read,write")
	_, agent := s.token("ainotes:agent", false, "read,write")
	_, moderator := s.token("ainotes:moderator", false, "read,write,lock")
	_, human := s.token("human:setup", true, "read,write,lock,verify")
	bearer := func(identity string, human bool, rights string) string {
		secret, _ := s.token(identity, human, rights)
		return "Bearer " + secret
	}
	// § 16: a room beside general, where the cases' threads are, and the matrix's human an
	// administrator (who writes rooms).
	if _, err := s.svc.CreateRoom(context.Background(), protocol.OperatorActor(), []byte(`{"name":"`+otherRoom+`","title":"Elsewhere"}`)); err != nil {
		s.t.Fatal(err)
	}
	if _, err := s.db.CreateAdmin(context.Background(), "ann", "$argon2id$not-a-password"); err != nil {
		s.t.Fatal(err)
	}
	scoped := func(identity, rights, rooms string) string {
		secret, _ := s.scopedToken(identity, false, rights, rooms)
		return "Bearer " + secret
	}
	malformed := "Bearer parley_" + "not!a%token" // not of the form NewTokenSecret makes
	s.secrets = append(s.secrets, "parley_not!a%token")
	return &cast{
		creator: creator, agent: agent, moderator: moderator, human: human,
		authorization: map[string]string{
			"no token":                       "",
			"malformed token":                malformed,
			"revoked token":                  "Bearer " + s.revokedToken("ainotes:revoked"),
			"read-only":                      bearer("ainotes:reader", false, "read"),
			"writer":                         bearer("ainotes:writer", false, "read,write"),
			"creator, other extension":       "Bearer " + creatorSecret,
			"lock holder":                    bearer("ainotes:lock", false, "read,write,lock"),
			"verifier":                       bearer("ainotes:verifier", false, "read,write,verify"),
			"human":                          bearer("human:ann", true, "read,write,lock,verify"),
			"scoped to another room":         scoped("ainotes:elsewhere", "read,write,lock,verify", otherRoom),
			"lock holder scoped to its room": scoped("ainotes:roomlock", "read,write,lock", "general"),
		},
		extension: map[string]string{"creator, other extension": speaksWith},
	}
}

// fixture is one prepared thread: its id, its root message, and a claim of the creator's in
// it that another identity attested (supported). For the unknown thread, ids that name
// nothing.
type fixture struct {
	thread, root, claim string
	// hidden is a note of the agent's on the root, hidden by a human (§ 18), where the case
	// asked for one.
	hidden string
}

var unknown = fixture{thread: "th_999999", root: "msg_999999", claim: "cl_999999", hidden: "msg_999998"}

var prepared atomic.Int64

// prepare makes a thread in the state st through the operation layer itself (the same
// database the server serves), and checks that it got there; withClaim adds the claim (two
// writes fewer for the cases that do not need it).
func (c *cast) prepare(t testing.TB, s *server, st threadState, withClaim bool) fixture {
	t.Helper()
	return c.prepareWith(t, s, st, withClaim, false)
}

// prepareWith is prepare, and withHidden adds the hidden note before the state is set (a
// confirmed closed thread takes no note).
func (c *cast) prepareWith(t testing.TB, s *server, st threadState, withClaim, withHidden bool) fixture {
	t.Helper()
	if !st.exists() {
		return unknown
	}
	n := prepared.Add(1)
	run := func(op func(context.Context, *protocol.Actor, []byte) (map[string]any, error), a *protocol.Actor, args string) map[string]any {
		t.Helper()
		res, err := op(context.Background(), a, []byte(args))
		if err != nil {
			t.Fatalf("preparing a thread %s: %s: %v", st.name, args, err)
		}
		return res
	}
	send := asMap(s.svc.Send)
	asked := run(send, c.creator, fmt.Sprintf(`{"kind":"ask","from":{"extension":%q},"body":"Which port does case %d use?"}`, openedWith, n))
	f := fixture{thread: at(asked, "thread", "id"), root: at(asked, "message", "id")}
	if withHidden {
		// A note keeps the thread's state and whose turn it is, and the agent is no caller of
		// the matrix (no self_reply, § 6).
		note := run(send, c.agent, `{"kind":"note","thread":"`+f.thread+`","parent":"`+f.root+`","body":"A note to hide in case `+fmt.Sprint(n)+`."}`)
		f.hidden = at(note, "message", "id")
		run(asMap(s.svc.Hide), c.human, `{"message":"`+f.hidden+`","reason":"Hidden by the matrix's setup."}`)
	}
	if withClaim {
		claim := run(asMap(s.svc.Assert), c.creator, `{"thread":"`+f.thread+`","from":{"extension":"`+openedWith+`"},"statement":"Case `+fmt.Sprint(n)+` uses 8080.","evidence":[{"kind":"note","ref":"the config file"}]}`)
		f.claim = at(claim, "claim", "id")
		run(asMap(s.svc.Attest), c.agent, `{"claim":"`+f.claim+`","evidence":[{"kind":"log","ref":"listening on :8080"}]}`)
	}

	act := func(a *protocol.Actor, kind string) {
		run(send, a, `{"kind":"`+kind+`","thread":"`+f.thread+`","from":{"extension":"`+openedWith+`"},"body":"`+kind+` in case `+fmt.Sprint(n)+`."}`)
	}
	answer := func() {
		run(send, c.agent, `{"kind":"answer","thread":"`+f.thread+`","body":"8080, case `+fmt.Sprint(n)+`."}`)
	}
	switch st.name {
	case "open":
	case "answered (proposed)":
		answer()
	case "decided (proposed)":
		answer()
		act(c.creator, "decide")
	case "closed (proposed)":
		answer()
		act(c.creator, "close")
	case "closed (confirmed)":
		answer()
		act(c.moderator, "close")
	case "deferred (proposed)":
		act(c.creator, "defer")
	case "obsolete (confirmed)":
		act(c.moderator, "obsolete")
	case "rejected (confirmed by a human)":
		act(c.human, "reject")
	default:
		t.Fatalf("no way to prepare %q", st.name)
	}
	// Checked where the claim was prepared too, which every state's shared thread is: each
	// recipe is checked there, and the threads without a claim follow the same recipe (a
	// read fewer each, for the many cases that need a fresh thread).
	if withClaim {
		got := c.snapshot(t, s, f)
		th, _ := got["thread"].(map[string]any)
		if th["state"] != st.state || (th["state_confirmed_at"] == nil) != st.proposed {
			t.Fatalf("prepared %s, got the thread %v", st.name, th)
		}
	}
	return f
}

// snapshot is the thread as read_thread returns it, with its messages and claims: what a
// refusal must leave as it was. The point it is read as of (as_of) is left out: it is the
// whole forum's, which the cases on other threads write to meanwhile.
func (c *cast) snapshot(t testing.TB, s *server, f fixture) map[string]any {
	t.Helper()
	res, err := asMap(s.svc.ReadThread)(context.Background(), c.agent, []byte(`{"thread":"`+f.thread+`"}`))
	if err != nil {
		t.Fatalf("reading %s: %v", f.thread, err)
	}
	delete(res, "as_of")
	return res
}

// stateDiff is cmp.Diff of two states read as JSON (maps, slices, numbers, strings), which are
// equal exactly when reflect.DeepEqual says so. It asks DeepEqual first: the states are equal
// in nearly every case, and cmp.Diff works out its report even for an equal pair — under the
// race detector that was a fifth of the suite's CPU.
func stateDiff(before, after map[string]any) string {
	if reflect.DeepEqual(before, after) {
		return ""
	}
	return cmp.Diff(before, after)
}

// asMap turns an operation's typed result into its JSON object, as both transports send it.
func asMap[T any](op func(context.Context, *protocol.Actor, []byte) (*T, error)) func(context.Context, *protocol.Actor, []byte) (map[string]any, error) {
	return func(ctx context.Context, a *protocol.Actor, raw []byte) (map[string]any, error) {
		res, err := op(ctx, a, raw)
		if err != nil {
			return nil, err
		}
		b, err := json.Marshal(res)
		if err != nil {
			return nil, err
		}
		var m map[string]any
		return m, json.Unmarshal(b, &m)
	}
}
