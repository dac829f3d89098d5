package protocol_test

import (
	"encoding/json"
	"strings"
)

// Lines that hold every rule their schema states (schemaGoodLines), and lines that each break
// one (schemaBadLines): among them those an outside check found the schemas let through —
// an evidence kind of no § 12, a url ref that is no URL, an attestation or refutation with no
// evidence, a statement past body_max_chars, a did or public_key of no key, a thread state or
// an event act that does not exist. Both validators, Go's and Ajv's, are held to them.

// Valid lines, each the base of the bad ones below.
const (
	goodRoom    = `{"type":"room","id":"rm_1","name":"general","title":"General","description":"","parent":null,"archived":false,"created_at":"2026-12-01T00:00:00Z"}`
	goodThread  = `{"type":"thread","id":"th_1","title":"T","state":"open","state_origin":"llm","state_confirmed_at":null,"confirmed_state":"open","locked":false,"creator":"ainotes:a","awaiting":null,"message_count":1,"created_at":"2026-12-01T00:00:00Z","updated_at":"2026-12-01T00:00:00Z","room":"rm_1"}`
	goodMessage = `{"type":"message","parley":"1","id":"msg_1","kind":"ask","thread":"th_1","parent":null,"from":{"identity":"ainotes:a","extension":""},"author_kind":"llm","body":"Does it build?","created_at":"2026-12-01T00:00:00Z","awaiting":null}`
	goodEvent   = `{"type":"event","id":"ev_1","thread":"th_1","subject":"cl_1","act":"attest","from":"unverified","to":"supported","origin":"llm","actor":{"identity":"ainotes:b","extension":""},"label":"b","message":null,"confirmed":false,"confirmed_at":null,"confirms":null,"stance":"att_1","at":"2026-12-01T00:00:00Z"}`
	goodClaim   = `{"type":"claim","id":"cl_1","thread":"th_1","anchor":"msg_1","statement":"it builds","asserted_by":{"identity":"ainotes:a","extension":""},"author_kind":"llm","state":"supported","state_origin":"llm","confirmed":false,"certainty":"supported","expired":false,"valid_until":null,"evidence":[{"kind":"url","ref":"https://ci.example.org/run/1"},{"kind":"hash","ref":"sha1:0123456789abcdef0123456789abcdef01234567"},{"kind":"commit","ref":"parley@0123abc"},{"kind":"log","ref":"PASS"}],"supersedes":[],"superseded_by":null,"attestations":["att_1"],"refutations":[],"verifications":[],"quorum":{"verifiers":0,"of":1},"created_at":"2026-12-01T00:00:00Z"}`
	goodStance  = `{"type":"stance","claim":"cl_1","stance":"attest","id":"att_1","by":{"identity":"ainotes:b","extension":""},"author_kind":"llm","evidence":[{"kind":"artifact","ref":"sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"}],"note":"ran it","at":"2026-12-01T00:00:00Z"}`
	goodRefute  = `{"type":"stance","claim":"cl_1","stance":"refute","id":"ref_2","by":{"identity":"ainotes:c","extension":""},"author_kind":"llm","evidence":[{"kind":"log","ref":"FAIL"}],"body":"it fails on arm64","at":"2026-12-01T00:00:00Z"}`
	goodKey     = `{"type":"key","id":"key_1","identity":"ainotes:b","did":"did:key:z6MkhYasewQspBQwiSFpYgMZV9W8UdZGavchGz2Uz1fAZneZ","public_key":"BFhWC8ORIqt8GI/HFMNyJ4EhfJ+gKeASpbYlxCAHA0E=","created_at":"2026-12-01T00:00:00Z","binding":{"type":"ParleyKeyBinding","realm":"ainotes","identity":"ainotes:b","key":"did:key:z6MkhYasewQspBQwiSFpYgMZV9W8UdZGavchGz2Uz1fAZneZ","created_at":"2026-12-01T00:00:00Z","proof":{"type":"DataIntegrityProof","cryptosuite":"eddsa-jcs-2022","created":"2026-12-01T00:00:00Z","verificationMethod":"did:key:z6MkopQ6w7ro5qp75i9QoKuaVKeNCZNYKJKTgEhoE3v313RT#z6MkopQ6w7ro5qp75i9QoKuaVKeNCZNYKJKTgEhoE3v313RT","proofPurpose":"assertionMethod","proofValue":"z3FXQjecWufY46yg5abdVZsXqLhxhueuSoZgNSARiKBk9czhSePTFehP8c3PGfb6a22gkfUKKiZgVrKSNiF6Lh9Kp"}}}`
)

var schemaGoodLines = []string{goodRoom, goodThread, goodMessage, goodEvent, goodClaim, goodStance, goodRefute, goodKey,
	// A thread whose title is withheld from its reader.
	edit(goodThread, "title", nil, "title_hidden", true)}

var schemaBadLines = []struct{ name, line string }{
	{"a room without its name", edit(goodRoom, "name", drop)},
	{"a thread id without its prefix", edit(goodThread, "id", "7")},
	{"a thread in the state bogus", edit(goodThread, "state", "bogus")},
	{"a thread title past 120 code points", edit(goodThread, "title", strings.Repeat("t", 121))},
	{"a hidden message with its body", edit(goodMessage, "kind", "note", "hidden", map[string]any{"by": "human:root", "reason": "r", "at": "2026-12-01T00:00:00Z"})},
	{"a message body past body_max_chars", edit(goodMessage, "body", strings.Repeat("b", 501))},
	{"a message by an author of no kind", edit(goodMessage, "author_kind", "robot")},
	{"a claim in no state of § 12", edit(goodClaim, "state", "true")},
	{"a claim with a statement of 600 characters", edit(goodClaim, "statement", strings.Repeat("s", 600))},
	{"a claim with an empty statement", edit(goodClaim, "statement", "")},
	{"a claim without evidence", edit(goodClaim, "evidence", []any{})},
	{"a claim with evidence of the kind bogus", edit(goodClaim, "evidence", []any{map[string]any{"kind": "bogus", "ref": "x"}})},
	{"a claim with url evidence whose ref is no URL", edit(goodClaim, "evidence", []any{map[string]any{"kind": "url", "ref": "not a url"}})},
	{"a claim with url evidence of a javascript: URL", edit(goodClaim, "evidence", []any{map[string]any{"kind": "url", "ref": "javascript:alert(1)"}})},
	{"a claim with a hash of no algorithm", edit(goodClaim, "evidence", []any{map[string]any{"kind": "hash", "ref": "md5:d41d8cd98f00b204e9800998ecf8427e"}})},
	{"a claim with an artifact ref of no sha256", edit(goodClaim, "evidence", []any{map[string]any{"kind": "artifact", "ref": "report.pdf"}})},
	{"a claim with a commit of no hex", edit(goodClaim, "evidence", []any{map[string]any{"kind": "commit", "ref": "main"}})},
	{"a claim with an evidence note past 500 characters", edit(goodClaim, "evidence", []any{map[string]any{"kind": "log", "ref": "x", "note": strings.Repeat("n", 501)}})},
	{"a claim with more evidence than evidence_max_items", edit(goodClaim, "evidence", manyEvidence(17))},
	{"a claim with a quorum of 0", edit(goodClaim, "quorum", map[string]any{"verifiers": 0, "of": 0})},
	{"an attestation named as a refutation", edit(goodStance, "id", "ref_1")},
	{"an attestation with empty evidence", edit(goodStance, "evidence", []any{})},
	{"a refutation with empty evidence", edit(goodRefute, "evidence", []any{})},
	{"a refutation without its body", edit(goodRefute, "body", drop)},
	{"an attestation with a body", edit(goodStance, "body", "no")},
	{"a stance with evidence of the kind weird", edit(goodStance, "evidence", []any{map[string]any{"kind": "weird", "ref": "x"}})},
	{"an export line with a short hash", `{"type":"export","parley":"1","realm":"r","realm_key":"did:key:z6MkhYasewQspBQwiSFpYgMZV9W8UdZGavchGz2Uz1fAZneZ","exported_at":"2026-12-01T00:00:00Z","counts":{"room":1,"thread":0,"message":0,"event":0,"claim":0,"stance":0,"key":0},"sha256":"abc","proof":{"type":"DataIntegrityProof","cryptosuite":"eddsa-jcs-2022","created":"2026-12-01T00:00:00Z","verificationMethod":"did:key:z6MkhYasewQspBQwiSFpYgMZV9W8UdZGavchGz2Uz1fAZneZ#z6MkhYasewQspBQwiSFpYgMZV9W8UdZGavchGz2Uz1fAZneZ","proofPurpose":"assertionMethod","proofValue":"z1"}}`},
	{"an export line whose realm key is no did:key", `{"type":"export","parley":"1","realm":"r","realm_key":"did:key:z6Mk","exported_at":"2026-12-01T00:00:00Z","counts":{"room":1,"thread":0,"message":0,"event":0,"claim":0,"stance":0,"key":0},"sha256":"` + strings.Repeat("a", 64) + `","proof":{"type":"DataIntegrityProof","cryptosuite":"eddsa-jcs-2022","created":"2026-12-01T00:00:00Z","verificationMethod":"did:key:z6MkhYasewQspBQwiSFpYgMZV9W8UdZGavchGz2Uz1fAZneZ#z6MkhYasewQspBQwiSFpYgMZV9W8UdZGavchGz2Uz1fAZneZ","proofPurpose":"assertionMethod","proofValue":"z1"}}`},
	{"an event at no time", edit(goodEvent, "at", "yesterday")},
	{"an event of the act teleport", edit(goodEvent, "act", "teleport")},
	{"a claim's event with a thread's act", edit(goodEvent, "act", "decide")},
	{"a claim's event to a thread's state", edit(goodEvent, "to", "closed")},
	{"a key line with a field no schema names", edit(goodKey, "secret", "s")},
	{"a key with a malformed did", edit(goodKey, "did", "did:key:z6Mk")},
	{"a key with a did that is no Ed25519 did:key", edit(goodKey, "did", "did:web:example.org")},
	{"a key with a malformed public_key", edit(goodKey, "public_key", "x")},
	{"a key with a public_key of 33 bytes", edit(goodKey, "public_key", "BFhWC8ORIqt8GI/HFMNyJ4EhfJ+gKeASpbYlxCAHA0EA")},
}

// drop, given as a value to edit, removes the member.
var drop = &struct{}{}

// edit is line with the members given (name, value, name, value…) set or, for drop, removed.
func edit(line string, members ...any) string {
	var m map[string]any
	if err := json.Unmarshal([]byte(line), &m); err != nil {
		panic(err)
	}
	for i := 0; i < len(members); i += 2 {
		name := members[i].(string)
		if members[i+1] == drop {
			delete(m, name)
			continue
		}
		m[name] = members[i+1]
	}
	out, err := json.Marshal(m)
	if err != nil {
		panic(err)
	}
	return string(out)
}

// manyEvidence is n items of log evidence.
func manyEvidence(n int) []any {
	items := make([]any, n)
	for i := range items {
		items[i] = map[string]any{"kind": "log", "ref": "x"}
	}
	return items
}
