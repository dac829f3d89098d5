package protocol_test

import (
	"context"
	"strings"
	"testing"

	"github.com/parleyforum/parley/protocol"
	"github.com/parleyforum/parley/storage"
	"github.com/parleyforum/parley/storage/storagetest"
)

// § 2: the envelope.

// envelopeRefusals are envelopes that are invalid_body, each with the field its message
// must name. thread and parent, when used, are th_1 / msg_1, which exist in the tests that
// send them.
var envelopeRefusals = []struct {
	name, env, field string
}{
	{"unknown top-level field", `{"kind":"ask","body":"q","colour":"red"}`, "colour"},
	{"unknown field in from", `{"kind":"ask","body":"q","from":{"extension":"w1","role":"boss"}}`, "from.role"},
	{"unknown field in provenance", `{"kind":"ask","body":"q","provenance":{"model":"m","temperature":"0.2"}}`, "provenance.temperature"},
	{"missing kind", `{"body":"q"}`, "kind"},
	{"null kind", `{"kind":null,"body":"q"}`, "kind"},
	{"unknown kind", `{"kind":"vote","body":"q"}`, "kind"},
	{"kind of another case", `{"kind":"Ask","body":"q"}`, "kind"},
	{"kind not a string", `{"kind":1,"body":"q"}`, "kind"},
	{"missing body", `{"kind":"ask"}`, "body"},
	{"null body", `{"kind":"ask","body":null}`, "body"},
	{"empty body", `{"kind":"ask","body":""}`, "body"},
	{"white-space-only body", `{"kind":"ask","body":" \t\n\u00a0\u2003 "}`, "body"},
	{"body of 501 code points", `{"kind":"ask","body":"` + strings.Repeat("ä", 501) + `"}`, "body"},
	{"body of 501 four-byte code points", `{"kind":"ask","body":"` + strings.Repeat("😀", 501) + `"}`, "body"},
	{"body not a string", `{"kind":"ask","body":["q"]}`, "body"},
	{`parley "2"`, `{"parley":"2","kind":"ask","body":"q"}`, "parley"},
	{"parley 1 as a number", `{"parley":1,"kind":"ask","body":"q"}`, "parley"},
	{"thread msg_5", `{"kind":"note","thread":"msg_5","body":"q"}`, "thread"},
	{"thread 0", `{"kind":"note","thread":0,"body":"q"}`, "thread"},
	{"thread -1", `{"kind":"note","thread":-1,"body":"q"}`, "thread"},
	{"thread 1.5", `{"kind":"note","thread":1.5,"body":"q"}`, "thread"},
	{"thread 1e3", `{"kind":"note","thread":1e3,"body":"q"}`, "thread"},
	{`thread "th_"`, `{"kind":"note","thread":"th_","body":"q"}`, "thread"},
	{`thread "th_0"`, `{"kind":"note","thread":"th_0","body":"q"}`, "thread"},
	{`thread "th_-5"`, `{"kind":"note","thread":"th_-5","body":"q"}`, "thread"},
	{`thread " 5"`, `{"kind":"note","thread":" 5","body":"q"}`, "thread"},
	{`thread ""`, `{"kind":"note","thread":"","body":"q"}`, "thread"},
	{"thread true", `{"kind":"note","thread":true,"body":"q"}`, "thread"},
	{"thread an object", `{"kind":"note","thread":{"id":5},"body":"q"}`, "thread"},
	{"thread beyond int64", `{"kind":"note","thread":9223372036854775808,"body":"q"}`, "thread"},
	{"parent th_5", `{"kind":"note","parent":"th_5","body":"q"}`, "parent"},
	{"parent 0", `{"kind":"note","parent":0,"body":"q"}`, "parent"},
	{"parent -1", `{"kind":"note","parent":-1,"body":"q"}`, "parent"},
	{"parent 1.5", `{"kind":"note","parent":1.5,"body":"q"}`, "parent"},
	{`parent "msg_"`, `{"kind":"note","parent":"msg_","body":"q"}`, "parent"},
	{"parent true", `{"kind":"note","parent":true,"body":"q"}`, "parent"},
	{"from not an object", `{"kind":"ask","body":"q","from":"w1"}`, "from"},
	{"extension not a string", `{"kind":"ask","body":"q","from":{"extension":7}}`, "from.extension"},
	{"extension starting with a dot", `{"kind":"ask","body":"q","from":{"extension":".w1"}}`, "from.extension"},
	{"extension with a space", `{"kind":"ask","body":"q","from":{"extension":"w 1"}}`, "from.extension"},
	{"extension with a slash", `{"kind":"ask","body":"q","from":{"extension":"w/1"}}`, "from.extension"},
	{"extension not ASCII", `{"kind":"ask","body":"q","from":{"extension":"wörker"}}`, "from.extension"},
	{"extension of 65 characters", `{"kind":"ask","body":"q","from":{"extension":"` + strings.Repeat("x", 65) + `"}}`, "from.extension"},
	{"provenance not an object", `{"kind":"ask","body":"q","provenance":"gpt"}`, "provenance"},
	{"provenance.model of 201", `{"kind":"ask","body":"q","provenance":{"model":"` + strings.Repeat("é", 201) + `"}}`, "provenance.model"},
	{"provenance.client of 201", `{"kind":"ask","body":"q","provenance":{"client":"` + strings.Repeat("é", 201) + `"}}`, "provenance.client"},
	{"provenance.model not a string", `{"kind":"ask","body":"q","provenance":{"model":4}}`, "provenance.model"},
	{"a note without thread or parent", `{"kind":"note","body":"q"}`, "thread"},
	{"an answer without thread or parent", `{"kind":"answer","body":"q"}`, "thread"},
	{"a decide without thread or parent", `{"kind":"decide","body":"q"}`, "thread"},
	{"a body that is an array", `[{"kind":"ask","body":"q"}]`, "object"},
	{"a body that is a string", `"ask"`, "object"},
	{"a body that is null", `null`, "object"},
	{"an empty body", ``, "object"},
	{"unparsable JSON", `{"kind":"ask","body":"q"`, "JSON"},
	{"trailing garbage", `{"kind":"ask","body":"q"} x`, "after"},
	{"a second object", `{"kind":"ask","body":"q"}{"kind":"ask","body":"r"}`, "after"},
	{"a stray closing brace", `{"kind":"ask","body":"q"}}`, "after"},
	{"a stray closing bracket", `{"kind":"ask","body":"q"}]`, "after"},
	{"U+0000 in the body", `{"kind":"ask","body":"a\u0000b"}`, "body"},
	{"U+0000 in provenance.model", `{"kind":"ask","body":"q","provenance":{"model":"m\u0000"}}`, "provenance.model"},
	{"U+0000 in provenance.client", `{"kind":"ask","body":"q","provenance":{"client":"\u0000"}}`, "provenance.client"},
	{"U+0000 in from.extension", `{"kind":"ask","body":"q","from":{"extension":"w\u0000"}}`, "from.extension"},
	{"invalid UTF-8 in the body", "{\"kind\":\"ask\",\"body\":\"a\xffb\"}", "UTF-8"},
	{"invalid UTF-8 in an ignored field", "{\"kind\":\"ask\",\"body\":\"q\",\"id\":\"\xc3\"}", "UTF-8"},
	{"a lone high surrogate", `{"kind":"ask","body":"a\ud83db"}`, "body"},
	{"a lone high surrogate at the end", `{"kind":"ask","body":"a\ud83d"}`, "body"},
	{"a lone low surrogate", `{"kind":"ask","body":"a\ude00b"}`, "body"},
	{"two high surrogates", `{"kind":"ask","body":"\ud83d\ud83d"}`, "body"},
	{"kind twice", `{"kind":"note","kind":"ask","body":"q"}`, "kind"},
	{"body twice", `{"kind":"ask","body":"q","body":"r"}`, "body"},
	{"extension twice", `{"kind":"ask","body":"q","from":{"extension":"a","extension":"b"}}`, "from.extension"},
	{"a key twice inside a field the server sets", `{"kind":"ask","body":"q","id":{"x":[{"y":1,"y":2}]}}`, "id.x[0].y"},
	{`thread "th_01"`, `{"kind":"note","thread":"th_01","body":"q"}`, "thread"},
	{`thread "01"`, `{"kind":"note","thread":"01","body":"q"}`, "thread"},
	{`parent "msg_007"`, `{"kind":"note","parent":"msg_007","body":"q"}`, "parent"},
	{"a body of zero-width characters", `{"kind":"ask","body":"\u200b\ufeff\u200b"}`, "body"},
	{"a body of a word joiner and spaces", `{"kind":"ask","body":" \u2060\u200c\u200d "}`, "body"},
}

func TestDecodeEnvelopeRefusals(t *testing.T) {
	for _, c := range envelopeRefusals {
		t.Run(c.name, func(t *testing.T) {
			env, err := protocol.DecodeEnvelope([]byte(c.env), protocol.DefaultLimits())
			if err == nil {
				t.Fatalf("DecodeEnvelope(%s) = %+v, want invalid_body", c.env, env)
			}
			if err.Reason != protocol.ReasonInvalidBody || err.Status != 400 {
				t.Fatalf("DecodeEnvelope(%s): %s %d, want invalid_body 400", c.env, err.Reason, err.Status)
			}
			if !strings.Contains(err.Message, c.field) {
				t.Fatalf("DecodeEnvelope(%s): message %q does not name %q", c.env, err.Message, c.field)
			}
		})
	}
}

func ptr(s string) *string { return &s }

// envelopeAccepted are envelopes that decode, with what they decode to.
var envelopeAccepted = []struct {
	name, env string
	want      protocol.Envelope
}{
	{"an opening ask", `{"kind":"ask","body":"q"}`, protocol.Envelope{Kind: "ask", Body: "q"}},
	{`parley "1"`, `{"parley":"1","kind":"ask","body":"q"}`, protocol.Envelope{Kind: "ask", Body: "q"}},
	{"thread th_5", `{"kind":"note","thread":"th_5","body":"q"}`, protocol.Envelope{Kind: "note", Thread: 5, Body: "q"}},
	{"thread 5", `{"kind":"note","thread":5,"body":"q"}`, protocol.Envelope{Kind: "note", Thread: 5, Body: "q"}},
	{`thread "5"`, `{"kind":"note","thread":"5","body":"q"}`, protocol.Envelope{Kind: "note", Thread: 5, Body: "q"}},
	{"thread of 19 digits", `{"kind":"note","thread":9223372036854775807,"body":"q"}`, protocol.Envelope{Kind: "note", Thread: 9223372036854775807, Body: "q"}},
	{"parent msg_7", `{"kind":"note","parent":"msg_7","body":"q"}`, protocol.Envelope{Kind: "note", Parent: 7, Body: "q"}},
	{"parent 7", `{"kind":"note","parent":7,"body":"q"}`, protocol.Envelope{Kind: "note", Parent: 7, Body: "q"}},
	{`parent "7"`, `{"kind":"note","parent":"7","body":"q"}`, protocol.Envelope{Kind: "note", Parent: 7, Body: "q"}},
	{"thread and parent", `{"kind":"answer","thread":"th_2","parent":"msg_7","body":"q"}`, protocol.Envelope{Kind: "answer", Thread: 2, Parent: 7, Body: "q"}},
	{"a state act on a parent alone", `{"kind":"decide","parent":7,"body":"q"}`, protocol.Envelope{Kind: "decide", Parent: 7, Body: "q"}},
	{"null for every optional field",
		`{"parley":null,"kind":"ask","thread":null,"parent":null,"from":null,"body":"q","provenance":null,"id":null,"author_kind":null,"created_at":null}`,
		protocol.Envelope{Kind: "ask", Body: "q"}},
	{"null inside from and provenance",
		`{"kind":"ask","body":"q","from":{"extension":null,"identity":null},"provenance":{"model":null,"client":null}}`,
		protocol.Envelope{Kind: "ask", Body: "q"}},
	{"server-set fields ignored",
		`{"id":"msg_99","kind":"ask","body":"q","from":{"identity":"ainotes:mallory","extension":"w1"},"author_kind":"human","created_at":"2026-12-01T10:00:00Z","awaiting":null}`,
		protocol.Envelope{Kind: "ask", Body: "q", Extension: "w1"}},
	{"server-set fields of any type ignored",
		`{"id":{"x":1},"kind":"ask","body":"q","from":{"identity":5},"author_kind":[1],"created_at":false}`,
		protocol.Envelope{Kind: "ask", Body: "q"}},
	{"the default extension", `{"kind":"ask","body":"q","from":{"extension":""}}`, protocol.Envelope{Kind: "ask", Body: "q"}},
	{"an empty from", `{"kind":"ask","body":"q","from":{}}`, protocol.Envelope{Kind: "ask", Body: "q"}},
	{"extension with dot, dash, underscore", `{"kind":"ask","body":"q","from":{"extension":"Worker-2.a_b"}}`, protocol.Envelope{Kind: "ask", Body: "q", Extension: "Worker-2.a_b"}},
	{"extension of one digit", `{"kind":"ask","body":"q","from":{"extension":"7"}}`, protocol.Envelope{Kind: "ask", Body: "q", Extension: "7"}},
	{"extension of 64 characters", `{"kind":"ask","body":"q","from":{"extension":"` + strings.Repeat("x", 64) + `"}}`, protocol.Envelope{Kind: "ask", Body: "q", Extension: strings.Repeat("x", 64)}},
	{"body of 500 two-byte code points", `{"kind":"ask","body":"` + strings.Repeat("ä", 500) + `"}`, protocol.Envelope{Kind: "ask", Body: strings.Repeat("ä", 500)}},
	{"body of 500 four-byte code points", `{"kind":"ask","body":"` + strings.Repeat("😀", 500) + `"}`, protocol.Envelope{Kind: "ask", Body: strings.Repeat("😀", 500)}},
	{"body with surrounding space kept", `{"kind":"ask","body":"  q  "}`, protocol.Envelope{Kind: "ask", Body: "  q  "}},
	{"provenance of 200", `{"kind":"ask","body":"q","provenance":{"model":"` + strings.Repeat("é", 200) + `","client":"` + strings.Repeat("€", 200) + `"}}`,
		protocol.Envelope{Kind: "ask", Body: "q", Provenance: protocol.Provenance{Model: ptr(strings.Repeat("é", 200)), Client: ptr(strings.Repeat("€", 200))}}},
	{"empty provenance fields", `{"kind":"ask","body":"q","provenance":{"model":""}}`,
		protocol.Envelope{Kind: "ask", Body: "q", Provenance: protocol.Provenance{Model: ptr("")}}},
	{"white space around the object", " \n{\"kind\":\"ask\",\"body\":\"q\"}\n ", protocol.Envelope{Kind: "ask", Body: "q"}},
	{"a surrogate pair", `{"kind":"ask","body":"\ud83d\ude00"}`, protocol.Envelope{Kind: "ask", Body: "😀"}},
	{"U+FFFD as sent", `{"kind":"ask","body":"\ufffd"}`, protocol.Envelope{Kind: "ask", Body: "\ufffd"}},
	{"an escaped backslash before u0000", `{"kind":"ask","body":"\\u0000"}`, protocol.Envelope{Kind: "ask", Body: `\u0000`}},
	{"keys, braces and escapes inside a string", `{"kind":"ask","body":"{\"kind\":\"note\"}, [\"body\":1] \\"}`,
		protocol.Envelope{Kind: "ask", Body: `{"kind":"note"}, ["body":1] \`}},
	{"a zero-width joiner inside a word", `{"kind":"ask","body":"a\u200db"}`, protocol.Envelope{Kind: "ask", Body: "a\u200db"}},
	{"the same key in from and at the top", `{"kind":"ask","body":"q","from":{"extension":"w1"},"provenance":{"client":"c"}}`,
		protocol.Envelope{Kind: "ask", Body: "q", Extension: "w1", Provenance: protocol.Provenance{Client: ptr("c")}}},
}

func TestDecodeEnvelopeAccepts(t *testing.T) {
	for _, c := range envelopeAccepted {
		t.Run(c.name, func(t *testing.T) {
			env, err := protocol.DecodeEnvelope([]byte(c.env), protocol.DefaultLimits())
			if err != nil {
				t.Fatalf("DecodeEnvelope(%s): %v", c.env, err)
			}
			if jsonOf(env) != jsonOf(c.want) {
				t.Fatalf("DecodeEnvelope(%s) = %s, want %s", c.env, jsonOf(env), jsonOf(c.want))
			}
		})
	}
}

// Every kind is decoded, and only the nine.
func TestDecodeEnvelopeKinds(t *testing.T) {
	for _, k := range protocol.Kinds {
		env, err := protocol.DecodeEnvelope([]byte(envelope(string(k.Kind), "th_1", "q")), protocol.DefaultLimits())
		if err != nil || env.Kind != k.Kind {
			t.Errorf("kind %s: %+v %v", k.Kind, env, err)
		}
	}
}

// Through Send on both databases: each refused envelope writes nothing, and the server sets
// identity, author_kind, id and created_at whatever the client sent.
func TestSendRejectedEnvelopeWritesNothing(t *testing.T) {
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		svc := newService(t, db)
		alice := agent("alice", "read,write")
		bob := agent("bob", "read,write")
		opened := send(t, svc, alice, envelope("ask", "", "Does the envelope hold?"))
		if opened.Thread.ID != "th_1" || opened.Message.ID != "msg_1" {
			t.Fatalf("the first thread is %s, message %s; the table assumes th_1 and msg_1", opened.Thread.ID, opened.Message.ID)
		}
		send(t, svc, bob, envelope("answer", "th_1", "It does."))
		before := census(t, svc)
		for _, c := range envelopeRefusals {
			_, err := svc.Send(context.Background(), bob, []byte(c.env))
			if e := wantRefused(t, err, protocol.ReasonInvalidBody); !strings.Contains(e.Message, c.field) {
				t.Errorf("%s: message %q does not name %q", c.name, e.Message, c.field)
			}
		}
		if after := census(t, svc); after != before {
			t.Fatalf("rejected envelopes wrote: before %+v, after %+v", before, after)
		}
	})
}

func TestSendSetsServerFields(t *testing.T) {
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		svc := newService(t, db)
		alice := agent("alice", "read,write")
		res := send(t, svc, alice, `{"id":"msg_99","kind":"ask","body":"Who am I?","from":{"identity":"human:root","extension":"w1"},"author_kind":"human","created_at":"2000-01-01T00:00:00Z","provenance":{"model":"m1","client":"c1"}}`)
		m := res.Message
		if m.ID == "msg_99" || m.From.Identity != alice.Identity || m.From.Extension != "w1" || m.AuthorKind != "llm" || m.CreatedAt.Year() == 2000 {
			t.Fatalf("the server's fields were taken from the client: %s", jsonOf(m))
		}
		if m.Parley != "1" || m.Kind != protocol.KindAsk || m.Thread != res.Thread.ID || m.Parent != nil {
			t.Fatalf("message: %s", jsonOf(m))
		}
		if m.Provenance == nil || *m.Provenance.Model != "m1" || *m.Provenance.Client != "c1" {
			t.Fatalf("provenance: %s", jsonOf(m.Provenance))
		}
		if m.CreatedAt.Location().String() != "UTC" {
			t.Fatalf("created_at %v is not UTC", m.CreatedAt)
		}
		// The thread forms of § 2 all reach the same thread; without a thread, the parent's.
		for _, form := range []string{`"th_1"`, `1`, `"1"`} {
			got := send(t, svc, agent("bob", "read,write"), `{"kind":"note","thread":`+form+`,"body":`+jsonOf("thread "+form)+`}`)
			if got.Thread.ID != "th_1" || *got.Message.Parent != "msg_1" {
				t.Fatalf("thread %s: %s", form, jsonOf(got.Message))
			}
		}
		for _, form := range []string{`"msg_1"`, `1`, `"1"`} {
			got := send(t, svc, agent("carol", "read,write"), `{"kind":"note","parent":`+form+`,"body":`+jsonOf("parent "+form)+`}`)
			if got.Thread.ID != "th_1" || *got.Message.Parent != "msg_1" {
				t.Fatalf("parent %s: %s", form, jsonOf(got.Message))
			}
		}
	})
}

// § 3: an opening ask titles its thread with the first line of its body, at most 120 code
// points.
func TestTitle(t *testing.T) {
	long := strings.Repeat("ü", 130)
	cases := map[string]string{
		"Which port?":                         "Which port?",
		"  Which port?  \nThe details follow": "Which port?",
		"\n\n  Leading blank lines\nsecond":   "Leading blank lines",
		long:                                  strings.Repeat("ü", 120),
		long + "\nsecond":                     strings.Repeat("ü", 120),
		strings.Repeat("x", 120):              strings.Repeat("x", 120),
		// A flag is two code points: cut after 119 it would leave half of one.
		strings.Repeat("x", 119) + "🇩🇪 rest": strings.Repeat("x", 119),
		strings.Repeat("x", 118) + "🇩🇪 rest": strings.Repeat("x", 118) + "🇩🇪",
		// e and a combining acute accent are one character a reader sees.
		strings.Repeat("x", 119) + "e\u0301 rest": strings.Repeat("x", 119),
	}
	for body, want := range cases {
		if got := protocol.Title(body); got != want {
			t.Errorf("Title(%q) = %q, want %q", body, got, want)
		}
	}
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		svc := newService(t, db)
		res := send(t, svc, agent("alice", "read,write"), envelope("ask", "", "  First line\nsecond line"))
		if res.Thread.Title == nil || *res.Thread.Title != "First line" || res.Message.Body != "  First line\nsecond line" {
			t.Fatalf("thread %s, message body %q", jsonOf(res.Thread), res.Message.Body)
		}
		if res.Thread.Creator != "ainotes:alice" || res.Thread.MessageCount != 1 || res.Thread.State != protocol.StateOpen {
			t.Fatalf("thread: %s", jsonOf(res.Thread))
		}
	})
}
