package protocol_test

import (
	"testing"

	"github.com/parleyforum/parley/protocol"
	"github.com/parleyforum/parley/storage"
	"github.com/parleyforum/parley/storage/storagetest"
)

// § 3: there is always exactly one open move. Each step of a conversation names its sender,
// its envelope, and the parent and awaiting the message must get; "$n" in an envelope or a
// want is the id of step n's message ("$t" the thread's).

type awaitStep struct {
	who      string // alice, bob, carol, dave, mod, ada
	ext      string // from.extension
	env      string // the envelope, without from; "$t" and "$n" replaced
	parent   string // the parent the message must get ("$n"), "" for the root's none
	awaiting string // the awaiting it must leave, as JSON ("null" for none)
}

func awaitingCases() map[string][]awaitStep {
	to := func(who, ext, setBy string) string { return awaitsTo("ainotes:"+who, ext, setBy) }
	any := func(who, ext, setBy string) string { return awaitsAny("ainotes:"+who, ext, setBy) }
	return map[string][]awaitStep{
		"ask without parent awaits anyone but the asker": {
			{"alice", "w1", `{"kind":"ask","body":"q"}`, "", any("alice", "w1", "$0")},
			{"bob", "", `{"kind":"ask","thread":"$t","body":"another question"}`, "$0", any("bob", "", "$1")},
		},
		"ask with a parent awaits the parent's author and extension": {
			{"alice", "w1", `{"kind":"ask","body":"q"}`, "", any("alice", "w1", "$0")},
			{"bob", "b", `{"kind":"ask","parent":"$0","body":"what do you mean?"}`, "$0", to("alice", "w1", "$1")},
			{"alice", "w2", `{"kind":"ask","thread":"$t","parent":"$1","body":"which part?"}`, "$1", to("bob", "b", "$2")},
		},
		"answer awaits the author of the nearest ask at or above the parent": {
			{"carol", "", `{"kind":"ask","body":"q"}`, "", any("carol", "", "$0")},
			{"alice", "a", `{"kind":"answer","thread":"$t","body":"an answer"}`, "$0", to("carol", "", "$1")},
			{"bob", "b", `{"kind":"ask","parent":"$1","body":"why so?"}`, "$1", to("alice", "a", "$2")},
			{"alice", "a", `{"kind":"answer","parent":"$2","body":"because"}`, "$2", to("bob", "b", "$3")},
			{"dave", "", `{"kind":"answer","parent":"$3","body":"and also"}`, "$3", to("bob", "b", "$4")},
			{"dave", "", `{"kind":"answer","parent":"$1","body":"to the first answer"}`, "$1", to("carol", "", "$5")},
			{"dave", "x", `{"kind":"answer","parent":"$0","body":"to the root"}`, "$0", to("carol", "", "$6")},
		},
		"note copies the awaiting": {
			{"alice", "", `{"kind":"ask","body":"q"}`, "", any("alice", "", "$0")},
			{"bob", "", `{"kind":"note","thread":"$t","body":"noted"}`, "$0", any("alice", "", "$0")},
			{"carol", "", `{"kind":"answer","thread":"$t","body":"answer"}`, "$0", to("alice", "", "$2")},
			{"bob", "", `{"kind":"note","parent":"$2","body":"a remark"}`, "$2", to("alice", "", "$2")},
			{"alice", "", `{"kind":"decide","thread":"$t","body":"decided"}`, "$0", "null"},
			{"bob", "", `{"kind":"note","thread":"$t","body":"nothing awaited"}`, "$0", "null"},
		},
		"decide, close, defer, reject, obsolete await nobody": {
			{"alice", "", `{"kind":"ask","body":"q"}`, "", any("alice", "", "$0")},
			{"bob", "", `{"kind":"answer","thread":"$t","body":"a"}`, "$0", to("alice", "", "$1")},
			{"alice", "", `{"kind":"decide","thread":"$t","body":"d"}`, "$0", "null"},
			{"alice", "", `{"kind":"close","thread":"$t","body":"c"}`, "$0", "null"},
			{"mod", "m", `{"kind":"reopen","thread":"$t","body":"again"}`, "$0", any("mod", "m", "$4")},
			{"alice", "", `{"kind":"defer","thread":"$t","body":"later"}`, "$0", "null"},
			{"mod", "", `{"kind":"reopen","thread":"$t","body":"again"}`, "$0", any("mod", "", "$6")},
			{"alice", "", `{"kind":"reject","thread":"$t","body":"off-topic"}`, "$0", "null"},
			{"mod", "", `{"kind":"reopen","thread":"$t","body":"again"}`, "$0", any("mod", "", "$8")},
			{"alice", "", `{"kind":"obsolete","thread":"$t","body":"overtaken"}`, "$0", "null"},
		},
		"reopen awaits anyone but the reopener": {
			{"alice", "", `{"kind":"ask","body":"q"}`, "", any("alice", "", "$0")},
			{"bob", "", `{"kind":"answer","thread":"$t","body":"a"}`, "$0", to("alice", "", "$1")},
			{"alice", "", `{"kind":"close","thread":"$t","body":"c"}`, "$0", "null"},
			{"alice", "w9", `{"kind":"reopen","thread":"$t","body":"not yet"}`, "$0", any("alice", "w9", "$3")},
		},
		"answer defaults to the message that set the awaiting, else the root": {
			{"alice", "", `{"kind":"ask","body":"q"}`, "", any("alice", "", "$0")},
			{"bob", "", `{"kind":"answer","thread":"$t","body":"a1"}`, "$0", to("alice", "", "$1")},
			{"carol", "", `{"kind":"answer","thread":"$t","body":"a2"}`, "$1", to("alice", "", "$2")},
			{"bob", "", `{"kind":"ask","thread":"$t","body":"new question"}`, "$0", any("bob", "", "$3")},
			{"carol", "", `{"kind":"answer","thread":"$t","body":"a3"}`, "$3", to("bob", "", "$4")},
			{"dave", "", `{"kind":"note","thread":"$t","body":"notes go to the root"}`, "$0", to("bob", "", "$4")},
			{"dave", "", `{"kind":"answer","thread":"$t","body":"after a note, the awaiting's setter"}`, "$4", to("bob", "", "$6")},
			{"alice", "", `{"kind":"decide","thread":"$t","body":"decided"}`, "$0", "null"},
			{"carol", "", `{"kind":"answer","thread":"$t","body":"nothing awaited: the root"}`, "$0", to("alice", "", "$8")},
		},
		"a human's messages await like anyone's": {
			{"ada", "", `{"kind":"ask","body":"q"}`, "", `{"to":"any","except":{"identity":"human:ada","extension":""},"set_by":"$0"}`},
			{"bob", "", `{"kind":"answer","thread":"$t","body":"a"}`, "$0", `{"to":{"identity":"human:ada","extension":""},"set_by":"$1"}`},
			{"ada", "", `{"kind":"answer","parent":"$1","body":"ada answers bob's answer"}`, "$1", `{"to":{"identity":"human:ada","extension":""},"set_by":"$2"}`},
		},
	}
}

func TestAwaiting(t *testing.T) {
	for name, steps := range awaitingCases() {
		t.Run(name, func(t *testing.T) {
			storagetest.Each(t, func(t *testing.T, db *storage.DB) {
				svc := newService(t, db)
				actors := map[string]*protocol.Actor{
					"alice": agent("alice", "read,write"), "bob": agent("bob", "read,write"),
					"carol": agent("carol", "read,write"), "dave": agent("dave", "read,write"),
					"mod": agent("mod", "read,write,lock"), "ada": human("ada"),
				}
				ids := map[string]string{}
				subst := func(s string) string {
					for k, v := range ids {
						s = replaceAll(s, k, v)
					}
					return s
				}
				for i, st := range steps {
					env := subst(st.env)
					if st.ext != "" {
						env = env[:len(env)-1] + `,"from":{"extension":"` + st.ext + `"}}`
					}
					res := send(t, svc, actors[st.who], env)
					if i == 0 {
						ids["$t"] = res.Thread.ID
					}
					ids[key(i)] = res.Message.ID
					parent := ""
					if res.Message.Parent != nil {
						parent = *res.Message.Parent
					}
					if want := subst(st.parent); parent != want {
						t.Fatalf("step %d (%s %s): parent %q, want %q", i, st.who, env, parent, want)
					}
					if got, want := canon(jsonOf(res.Message.Awaiting)), canon(subst(st.awaiting)); got != want {
						t.Fatalf("step %d (%s %s): awaiting\n got %s\nwant %s", i, st.who, env, got, want)
					}
					// The thread's awaiting is that of its last message.
					if !sameAwaiting(res.Thread.Awaiting, res.Message.Awaiting) {
						t.Fatalf("step %d: the thread awaits %s, its last message %s", i, jsonOf(res.Thread.Awaiting), jsonOf(res.Message.Awaiting))
					}
					read := readThread(t, svc, ids["$t"])
					msgs := flatten(read.Messages)
					last := msgs[len(msgs)-1]
					if last.ID != res.Message.ID || !sameAwaiting(read.Thread.Awaiting, last.Awaiting) || !sameAwaiting(last.Awaiting, res.Message.Awaiting) {
						t.Fatalf("step %d: read back, the thread awaits %s and its last message %s %s", i, jsonOf(read.Thread.Awaiting), last.ID, jsonOf(last.Awaiting))
					}
				}
			})
		})
	}
}

func key(i int) string { return "$" + itoa(i) }

func itoa(i int) string {
	if i < 10 {
		return string(rune('0' + i))
	}
	return itoa(i/10) + string(rune('0'+i%10))
}

// replaceAll replaces whole keys only: "$1" must not eat the start of "$10".
func replaceAll(s, old, new string) string {
	out := ""
	for {
		i := indexKey(s, old)
		if i < 0 {
			return out + s
		}
		out += s[:i] + new
		s = s[i+len(old):]
	}
}

func indexKey(s, k string) int {
	for i := 0; i+len(k) <= len(s); i++ {
		if s[i:i+len(k)] == k && (i+len(k) == len(s) || s[i+len(k)] < '0' || s[i+len(k)] > '9') {
			return i
		}
	}
	return -1
}
