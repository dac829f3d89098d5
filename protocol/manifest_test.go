package protocol_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/parleyforum/parley/protocol"
)

// § 8: the manifest names everything needed to speak.

func TestManifestYou(t *testing.T) {
	svc := protocol.New(nil, protocol.Options{})
	if m := svc.Manifest(nil); m.You != nil {
		t.Fatalf("you without a caller: %+v", m.You)
	}
	if b, _ := json.Marshal(svc.Manifest(nil)); json.Valid(b) && containsKey(t, b, "you") {
		t.Fatalf("the manifest without a caller has a you field: %s", b)
	}
	labeled := agent("mod2", "read,write,lock")
	labeled.Label = "Moderation"
	cases := []struct {
		actor  *protocol.Actor
		rights []string
		label  *string
	}{
		{agent("alice", "read,write"), []string{"read", "write"}, nil},
		{agent("reader", "read"), []string{"read"}, nil},
		{agent("vera", "verify,read"), []string{"read", "verify"}, nil},
		{agent("mod", "read,write,lock"), []string{"read", "write", "lock"}, ptr("mod")},
		{labeled, []string{"read", "write", "lock"}, ptr("Moderation")},
		{human("ada"), []string{"read", "write", "lock", "verify"}, nil},
	}
	for _, c := range cases {
		you := svc.Manifest(c.actor).You
		if you == nil || you.Identity != c.actor.Identity || jsonOf(you.Rights) != jsonOf(c.rights) || jsonOf(you.Label) != jsonOf(c.label) || you.Human != c.actor.Human {
			t.Errorf("you of %s: %s", c.actor.Identity, jsonOf(you))
		}
	}
	// The wire form of you: label is null for a plain agent (§ 8's example).
	b, _ := json.Marshal(svc.Manifest(agent("alice", "read,write")).You)
	if canon(string(b)) != canon(`{"identity":"ainotes:alice","rights":["read","write"],"label":null,"human":false}`) {
		t.Errorf("you: %s", b)
	}
}

func containsKey(t *testing.T, b []byte, key string) bool {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	_, ok := m[key]
	return ok
}

// The kinds are exactly the nine of § 3, with its columns.
func TestManifestKinds(t *testing.T) {
	want := []struct {
		kind, needs, marks, defaultParent string
		expectsReply                      bool
	}{
		{"ask", "write", "", "root", true},
		{"answer", "write", "answered", "awaited", false},
		{"note", "write", "", "root", false},
		{"decide", "authority", "decided", "root", false},
		{"close", "authority", "closed", "root", false},
		{"reopen", "reopen", "open", "root", true},
		{"defer", "authority", "deferred", "root", false},
		{"reject", "authority", "rejected", "root", false},
		{"obsolete", "authority", "obsolete", "root", false},
	}
	got := protocol.New(nil, protocol.Options{}).Manifest(nil).Kinds
	if len(got) != len(want) {
		t.Fatalf("%d kinds, want 9", len(got))
	}
	for i, w := range want {
		k := got[i]
		marks := ""
		if k.Marks != nil {
			marks = string(*k.Marks)
		}
		if string(k.Kind) != w.kind || k.Needs != w.needs || marks != w.marks || k.DefaultParent != w.defaultParent ||
			k.ExpectsReply != w.expectsReply || k.Awaiting == "" || k.Does == "" {
			t.Errorf("kind %d: %s, want %+v", i, jsonOf(k), w)
		}
	}
	// The wire form names the columns.
	var wire []map[string]any
	b, _ := json.Marshal(got)
	if err := json.Unmarshal(b, &wire); err != nil {
		t.Fatal(err)
	}
	for _, k := range wire {
		for _, col := range []string{"kind", "needs", "expects_reply", "marks", "default_parent", "awaiting"} {
			if _, ok := k[col]; !ok {
				t.Errorf("kind %v has no %s", k["kind"], col)
			}
		}
	}
	m := protocol.New(nil, protocol.Options{}).Manifest(nil)
	if jsonOf(m.States) != `["open","answered","decided","closed"]` || jsonOf(m.SideStates) != `["deferred","obsolete","rejected"]` ||
		jsonOf(m.Rights) != `["read","write","lock","verify"]` || m.Parley != "1" || m.Server.Name != "parley" ||
		m.Transports.MCP != "/mcp" || m.Transports.HTTP != "/v1" || m.Realm != "ainotes" {
		t.Errorf("manifest: %s", jsonOf(m))
	}
}

// The reasons are exactly the table of § 9, with its statuses.
func TestManifestReasons(t *testing.T) {
	want := []struct {
		reason string
		status int
	}{
		{"invalid_body", 400}, {"unauthenticated", 401}, {"token_right_missing", 403},
		{"thread_authority_missing", 403}, {"not_found", 404}, {"payload_too_large", 413},
		{"self_reply", 409}, {"thread_closed", 409}, {"invalid_transition", 409},
		{"self_attestation", 409}, {"already_attested", 409}, {"limit_exceeded", 409},
		{"idempotency_conflict", 422}, {"rate_limited", 429}, {"unavailable", 503},
	}
	got := protocol.New(nil, protocol.Options{}).Manifest(nil).Reasons
	if len(got) != len(want) {
		t.Fatalf("%d reasons, want %d: %s", len(got), len(want), jsonOf(got))
	}
	for i, w := range want {
		if string(got[i].Reason) != w.reason || got[i].Status != w.status || got[i].Meaning == "" {
			t.Errorf("reason %d: %+v, want %s %d", i, got[i], w.reason, w.status)
		}
		if protocol.Reason(w.reason).Status() != w.status {
			t.Errorf("%s.Status() = %d", w.reason, protocol.Reason(w.reason).Status())
		}
		if e := protocol.Refuse(protocol.Reason(w.reason), "x"); e.Status != w.status {
			t.Errorf("Refuse(%s) has status %d", w.reason, e.Status)
		}
	}
}

// The limits shown are the limits in force.
func TestManifestLimits(t *testing.T) {
	if got := protocol.New(nil, protocol.Options{}).Manifest(nil).Limits; got != protocol.DefaultLimits() {
		t.Fatalf("default limits: %+v", got)
	}
	d := protocol.DefaultLimits()
	want := map[string]int{
		"body_max_chars": 500, "extension_max_chars": 64, "provenance_field_max_chars": 200,
		"request_max_bytes": 16384, "thread_max_messages": 1000, "thread_max_depth": 64,
		"writes_per_minute": 120, "inbox_max_items": 100, "list_max_items": 100,
		"evidence_max_items": 16, "evidence_ref_max_chars": 2048, "verify_quorum": 1,
		"artifact_max_bytes": 1048576, "import_max_bytes": 67108864,
		// § 19's bounds on connections and slow readers.
		"max_connections": 4096, "max_connections_per_address": 64, "min_read_bytes_per_second": 16384,
	}
	var wire map[string]int
	if err := json.Unmarshal([]byte(jsonOf(d)), &wire); err != nil {
		t.Fatal(err)
	}
	for name, v := range want {
		if wire[name] != v {
			t.Errorf("default %s = %d, want %d (§ 8)", name, wire[name], v)
		}
	}
	if d.InboxDefaultItems != 50 {
		t.Errorf("default inbox page %d, want 50", d.InboxDefaultItems)
	}

	l := protocol.DefaultLimits()
	if err := l.Set("body_max_chars", "280"); err != nil {
		t.Fatal(err)
	}
	l.WritesPerMinute = 7
	svc := protocol.New(nil, protocol.Options{Limits: l, Realm: "lab", Version: "1.2.3"})
	m := svc.Manifest(nil)
	if m.Limits != l || m.Limits.BodyMaxChars != 280 || m.Limits.WritesPerMinute != 7 || svc.Limits() != l {
		t.Fatalf("limits in force %+v, manifest %+v", l, m.Limits)
	}
	if m.Realm != "lab" || m.Server.Version != "1.2.3" {
		t.Fatalf("realm %s, version %s", m.Realm, m.Server.Version)
	}
	// And they are the values enforced.
	if _, err := protocol.DecodeEnvelope([]byte(envelope("ask", "", strings.Repeat("x", 281))), m.Limits); err == nil {
		t.Fatalf("a body of 281 passes a limit of 280")
	}
	if _, err := protocol.DecodeEnvelope([]byte(envelope("ask", "", strings.Repeat("x", 280))), m.Limits); err != nil {
		t.Fatalf("a body of 280: %v", err)
	}
}
