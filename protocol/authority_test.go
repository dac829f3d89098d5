package protocol_test

import (
	"context"
	"testing"

	"github.com/parleyforum/parley/protocol"
	"github.com/parleyforum/parley/storage"
	"github.com/parleyforum/parley/storage/storagetest"
)

// § 6: authority and loop protection, through Send on both databases.

// authorityActors: alice (extension w1) creates every thread; alice2 is her line with another
// extension, bob a model without authority, mod a lock holder, ada a human.
type authorityActor struct {
	actor *protocol.Actor
	ext   string
}

func authorityActors() map[string]authorityActor {
	alice := agent("alice", "read,write")
	return map[string]authorityActor{
		"creator":                     {alice, "w1"},
		"creator, another extension":  {alice, "w2"},
		"creator, default extension":  {alice, ""},
		"another model":               {agent("bob", "read,write"), ""},
		"a lock holder":               {agent("mod", "read,write,lock"), ""},
		"a lock holder without write": {agent("lockonly", "read,lock"), ""},
		"a human":                     {human("ada"), ""},
	}
}

func TestAuthority(t *testing.T) {
	ok := protocol.Reason("")
	cases := []struct {
		who    string
		state  string // the state the thread is driven into first
		kind   string
		reason protocol.Reason
	}{
		// decide, close, defer, reject, obsolete: the creator's line, lock, a human.
		{"creator", "answered", "decide", ok},
		{"creator, another extension", "answered", "decide", ok},
		{"creator, default extension", "answered", "close", ok},
		{"creator, another extension", "open", "defer", ok},
		{"another model", "answered", "decide", protocol.ReasonThreadAuthorityMissing},
		{"another model", "answered", "close", protocol.ReasonThreadAuthorityMissing},
		{"another model", "open", "defer", protocol.ReasonThreadAuthorityMissing},
		{"another model", "open", "reject", protocol.ReasonThreadAuthorityMissing},
		{"another model", "open", "obsolete", protocol.ReasonThreadAuthorityMissing},
		{"a lock holder", "answered", "decide", ok},
		{"a lock holder", "answered", "close", ok},
		{"a lock holder", "open", "reject", ok},
		{"a lock holder without write", "answered", "decide", protocol.ReasonTokenRightMissing},
		{"a human", "answered", "decide", ok},
		{"a human", "open", "close", ok},
		{"a human", "open", "obsolete", ok},
		// ask, answer and note need only write.
		{"another model", "open", "answer", ok},
		{"another model", "open", "note", ok},
		{"another model", "open", "ask", ok},
		// Reopening a closed thread: the creator (own threads), lock, a human.
		{"creator", "closed", "reopen", ok},
		{"creator, another extension", "closed", "reopen", ok},
		{"creator", "closed confirmed", "reopen", ok},
		{"another model", "closed", "reopen", protocol.ReasonThreadAuthorityMissing},
		{"another model", "closed confirmed", "reopen", protocol.ReasonThreadAuthorityMissing},
		{"a lock holder", "closed", "reopen", ok},
		{"a lock holder", "closed confirmed", "reopen", ok},
		{"a human", "closed confirmed", "reopen", ok},
		// Reopening a side state: lock or a human only.
		{"creator", "deferred", "reopen", protocol.ReasonThreadAuthorityMissing},
		{"creator, another extension", "rejected", "reopen", protocol.ReasonThreadAuthorityMissing},
		{"creator", "obsolete", "reopen", protocol.ReasonThreadAuthorityMissing},
		{"another model", "deferred", "reopen", protocol.ReasonThreadAuthorityMissing},
		{"a lock holder", "deferred", "reopen", ok},
		{"a lock holder", "obsolete", "reopen", ok},
		{"a human", "rejected", "reopen", ok},
		// Authority comes before the transition: a stranger's reopen of an open thread.
		{"another model", "open", "reopen", protocol.ReasonThreadAuthorityMissing},
		{"creator", "open", "reopen", protocol.ReasonInvalidTransition},
	}
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		f := newCast(t, db)
		actors := authorityActors()
		for _, c := range cases {
			t.Run(c.who+"/"+c.kind+" on "+c.state, func(t *testing.T) {
				th := f.authorityThread(t, c.state)
				a := actors[c.who]
				env := envelope(c.kind, th, "an act", "from", map[string]string{"extension": a.ext})
				if c.reason != ok {
					refuse(t, f.svc, a.actor, env, c.reason)
					return
				}
				res := send(t, f.svc, a.actor, env)
				if target := protocol.Kind(c.kind).Target(); target != "" && res.Thread.State != target {
					t.Fatalf("%s by %s: state %s, want %s", c.kind, c.who, res.Thread.State, target)
				}
			})
		}
	})
}

// authorityThread is a thread created by alice on extension w1, driven into state by alice
// (proposals), bob (answers) and mod (the confirmation of a close).
func (f *cast) authorityThread(t *testing.T, state string) string {
	t.Helper()
	from := map[string]string{"extension": "w1"}
	th := send(t, f.svc, f.alice, envelope("ask", "", "Whose is this?", "from", from)).Thread.ID
	switch state {
	case "open":
	case "answered":
		send(t, f.svc, f.bob, envelope("answer", th, "bob's answer"))
	case "closed", "closed confirmed":
		send(t, f.svc, f.bob, envelope("answer", th, "bob's answer"))
		send(t, f.svc, f.alice, envelope("close", th, "closed", "from", from))
		if state == "closed confirmed" {
			if _, err := f.svc.Confirm(context.Background(), f.mod, []byte(jsonOf(map[string]string{"thread": th}))); err != nil {
				t.Fatalf("confirm: %v", err)
			}
		}
	default:
		send(t, f.svc, f.alice, envelope(sideKind(protocol.State(state)), th, "parked", "from", from))
	}
	if got := thread(t, f.svc, th); string(got.State) != state && !(state == "closed confirmed" && got.Locked) {
		t.Fatalf("driving into %s gave %s", state, got.State)
	}
	return th
}

// The creator is the line, whatever the extension; lock extends authority to every thread.
func TestAuthorityOfTheLineAndOfLock(t *testing.T) {
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		svc := newService(t, db)
		alice := agent("alice", "read,write")
		bob := agent("bob", "read,write")
		mod := agent("mod", "read,write,lock")
		var threads []string
		for _, opener := range []*protocol.Actor{alice, bob, human("ada")} {
			threads = append(threads, send(t, svc, opener, envelope("ask", "", "Opened by "+opener.Identity)).Thread.ID)
		}
		for _, th := range threads {
			if res := send(t, svc, mod, envelope("decide", th, "mod decides everywhere")); res.Thread.State != protocol.StateDecided {
				t.Fatalf("mod's decide on %s: %s", th, res.Thread.State)
			}
		}
		// bob may decide only his own thread; alice only hers.
		refuse(t, svc, bob, envelope("decide", threads[0], "not mine"), protocol.ReasonThreadAuthorityMissing)
		send(t, svc, bob, envelope("decide", threads[1], "mine, revised", "from", map[string]string{"extension": "sub"}))
		refuse(t, svc, alice, envelope("decide", threads[2], "ada's thread"), protocol.ReasonThreadAuthorityMissing)
	})
}

// Loop protection (§ 6): per (identity, extension); humans exempt; the state acts exempt.
func TestSelfReply(t *testing.T) {
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		svc := newService(t, db)
		alice := agent("alice", "read,write")
		mod := agent("mod", "read,write,lock")
		ada := human("ada")
		w1 := map[string]string{"extension": "w1"}
		w2 := map[string]string{"extension": "w2"}

		opened := send(t, svc, alice, envelope("ask", "", "Loop?", "from", w1))
		th, root := opened.Thread.ID, opened.Message.ID
		for _, kind := range []string{"ask", "answer", "note"} {
			// The effective parent is the root (alice/w1): the same line and extension.
			e := refuse(t, svc, alice, envelope(kind, th, "to myself", "from", w1), protocol.ReasonSelfReply)
			if e.Status != 409 {
				t.Fatalf("self_reply status %d", e.Status)
			}
			refuse(t, svc, alice, envelope(kind, th, "to myself, explicitly", "from", w1, "parent", root), protocol.ReasonSelfReply)
		}
		// Another extension of the same identity may; so may the default extension.
		a2 := send(t, svc, alice, envelope("answer", th, "w2 answers w1", "from", w2))
		send(t, svc, alice, envelope("note", th, "the default extension notes", "parent", root))
		// w1 may answer w2's answer, but w2 not its own.
		send(t, svc, alice, envelope("ask", th, "w1 asks w2 back", "from", w1, "parent", a2.Message.ID))
		refuse(t, svc, alice, envelope("note", th, "w2 on w2", "from", w2, "parent", a2.Message.ID), protocol.ReasonSelfReply)

		// The state acts are exempt: the creator decides on her own root.
		send(t, svc, alice, envelope("decide", th, "decided on my own root", "from", w1, "parent", root))

		// Humans are exempt: ada replies to herself.
		h := send(t, svc, ada, envelope("ask", "", "A human's thread"))
		send(t, svc, ada, envelope("note", h.Thread.ID, "ada to ada"))
		send(t, svc, ada, envelope("answer", h.Thread.ID, "ada answers ada", "parent", h.Message.ID))
		// A lock holder is not: mod on mod.
		m := send(t, svc, mod, envelope("ask", "", "A moderator's thread"))
		refuse(t, svc, mod, envelope("note", m.Thread.ID, "mod to mod"), protocol.ReasonSelfReply)
		send(t, svc, mod, envelope("decide", m.Thread.ID, "but deciding is a state act"))
	})
}

func TestCheckAuthorityAndSelfReplyRules(t *testing.T) {
	alice := agent("alice", "read,write")
	bob := agent("bob", "read,write")
	mod := agent("mod", "read,write,lock")
	ada := human("ada")
	facts := func(s protocol.State) protocol.ThreadFacts {
		return protocol.ThreadFacts{State: s, Creator: alice.Identity, Locked: false}
	}
	for _, k := range protocol.Kinds {
		for _, s := range protocol.AllStates() {
			for _, a := range []*protocol.Actor{alice, bob, mod, ada} {
				err := protocol.CheckAuthority(a, facts(s), k.Kind)
				allowed := k.Needs == protocol.NeedsWrite || a.Moderator() ||
					(a == alice && !(k.Kind == protocol.KindReopen && s.IsSide()))
				if (err == nil) != allowed {
					t.Errorf("CheckAuthority(%s, %s, %s) = %v, want allowed %v", a.Identity, s, k.Kind, err, allowed)
				}
				if err != nil && err.Reason != protocol.ReasonThreadAuthorityMissing {
					t.Errorf("CheckAuthority refuses with %s", err.Reason)
				}
			}
		}
		for _, a := range []*protocol.Actor{alice, mod, ada} {
			for _, ext := range []string{"", "w1"} {
				for _, parentExt := range []string{"", "w1"} {
					err := protocol.CheckSelfReply(a, ext, k.Kind, a.Identity, parentExt)
					refused := !a.Human && k.Kind.LoopProtected() && ext == parentExt
					if (err != nil) != refused {
						t.Errorf("CheckSelfReply(%s/%q, %s, parent %q) = %v, want refused %v", a.Identity, ext, k.Kind, parentExt, err, refused)
					}
				}
			}
			if err := protocol.CheckSelfReply(a, "", k.Kind, bob.Identity, ""); err != nil {
				t.Errorf("CheckSelfReply on another's message: %v", err)
			}
		}
	}
}
