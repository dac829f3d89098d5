package security

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/parleyforum/parley/protocol"
	"github.com/parleyforum/parley/storage"
	"github.com/parleyforum/parley/storage/storagetest"
)

// hostileValue is one string an attacker or a broken client sends: as a JSON string literal
// (for a body), and as the bytes it stands for (for a path or a query, where JSON escapes do
// not exist; a lone surrogate is then the bytes a careless encoder makes of it).
type hostileValue struct {
	name    string
	literal []byte // the JSON string literal, quotes included
	bytes   string // what it decodes to; "" when it is no valid string
}

func hostileValues() []hostileValue {
	plain := func(name, s string) hostileValue { return hostileValue{name, []byte(quote(s)), s} }
	return []hostileValue{
		plain("SQL quote", `x'; DROP TABLE messages; --`),
		plain("SQL wildcards and backslashes", `100% _of_ \ it \\' " %% -- /*`),
		plain("HTML and script", `<script>alert(1)</script><img src=x onerror="alert(2)">&amp;`),
		{"NUL", []byte(`"a\u0000b"`), "a\x00b"},
		{"invalid UTF-8", []byte("\"a\xff\xfeb\""), "a\xff\xfeb"},
		{"lone surrogate", []byte(`"a\ud800b"`), "a\xed\xa0\x80b"},
		plain("10 kB", strings.Repeat("x", 10*1024)),
	}
}

// hostileField is one string field of one operation's input. input is the operation's valid
// input with hostileMark where the field goes.
type hostileField struct {
	op    operation
	field string
	as    string // the caller
	input func(h *hostileSetup) map[string]any
}

const hostileMark = "\x01hostile\x01"

// hostileSetup is what the cases name: a thread with a root, and a fresh claim per case for
// the operations that change a claim once per identity.
type hostileSetup struct {
	f   fixture
	new func() fixture // a fresh thread with a supported claim
}

func hostileFields() []hostileField {
	ops := map[string]operation{}
	onThread, standalone := operations()
	for _, op := range append(onThread, standalone...) {
		ops[op.name] = op
	}
	var fields []hostileField
	add := func(opName, as string, input func(h *hostileSetup) map[string]any, names ...string) {
		for _, name := range names {
			fields = append(fields, hostileField{op: ops[opName], field: name, as: as, input: input})
		}
	}
	note := func(h *hostileSetup) map[string]any {
		return map[string]any{"parley": "1", "kind": "note", "thread": h.f.thread, "parent": h.f.root, "body": "A note.",
			"from": map[string]any{"extension": "w9"}, "provenance": map[string]any{"model": "m", "client": "c"}}
	}
	add("send note", "writer", note, "parley", "kind", "thread", "parent", "body", "from.extension", "provenance.model", "provenance.client")
	thread := func(h *hostileSetup) map[string]any { return map[string]any{"thread": h.f.thread} }
	add("read_thread", "writer", thread, "thread")
	add("read_thread", "writer", func(h *hostileSetup) map[string]any { return map[string]any{"thread": h.f.thread, "cursor": "x"} }, "cursor")
	add("read_events", "writer", func(h *hostileSetup) map[string]any { return map[string]any{"thread": h.f.thread, "since": "x"} }, "thread", "since")
	add("list_threads", "writer", func(*hostileSetup) map[string]any { return map[string]any{"state": "open", "cursor": "x"} }, "state", "cursor")
	add("inbox", "writer", func(*hostileSetup) map[string]any { return map[string]any{"since": "x", "extension": "w1"} }, "since", "extension")
	add("confirm", "lock holder", thread, "thread")
	add("mark", "human", func(h *hostileSetup) map[string]any { return map[string]any{"thread": h.f.thread, "state": "open"} }, "thread", "state")
	add("claim_assert", "writer", func(h *hostileSetup) map[string]any {
		return map[string]any{"thread": h.f.thread, "parent": h.f.root, "statement": "It is 8080.",
			"evidence":   []any{map[string]any{"kind": "note", "ref": "the config", "note": "line 3"}},
			"supersedes": []any{h.f.claim}, "valid_until": "2999-01-01T00:00:00Z",
			"from": map[string]any{"extension": "w9"}, "provenance": map[string]any{"model": "m"}}
	}, "thread", "parent", "statement", "evidence.0.kind", "evidence.0.ref", "evidence.0.note", "supersedes.0", "valid_until", "from.extension", "provenance.model")
	stance := func(extra map[string]any) func(h *hostileSetup) map[string]any {
		return func(h *hostileSetup) map[string]any {
			m := map[string]any{"claim": h.new().claim, "evidence": []any{map[string]any{"kind": "note", "ref": "seen", "note": "twice"}},
				"from": map[string]any{"extension": "w9"}}
			for k, v := range extra {
				m[k] = v
			}
			return m
		}
	}
	add("claim_attest", "writer", stance(map[string]any{"note": "I saw it."}), "claim", "evidence.0.ref", "evidence.0.note", "note", "from.extension")
	// A stance's proof, made afresh for each field, since put writes into the nested object.
	proofed := func(h *hostileSetup) map[string]any {
		const did = "did:key:z6MkiTBz1ymuepAQ4HEHYSF1H8quG5GLVVQR3djdX3mDooWp"
		return stance(map[string]any{"proof": map[string]any{"type": "DataIntegrityProof", "cryptosuite": "eddsa-jcs-2022",
			"created": time.Now().UTC().Format(time.RFC3339), "verificationMethod": did + "#" + strings.TrimPrefix(did, "did:key:"),
			"proofPurpose": "assertionMethod", "proofValue": "z1111"}})(h)
	}
	add("claim_attest", "writer", proofed, "proof.type", "proof.cryptosuite", "proof.created", "proof.verificationMethod", "proof.proofPurpose", "proof.proofValue")
	add("claim_refute", "writer", stance(map[string]any{"body": "It is 9090."}), "claim", "evidence.0.ref", "body")
	add("claim_verify", "human", stance(map[string]any{"note": "Checked."}), "claim", "note", "evidence.0.ref")
	add("claim_read", "writer", func(h *hostileSetup) map[string]any { return map[string]any{"claim": h.f.claim} }, "claim")
	add("claim_graph", "writer", func(h *hostileSetup) map[string]any { return map[string]any{"thread": h.f.thread, "format": "json"} }, "thread", "format")
	add("claim_graph", "writer", func(h *hostileSetup) map[string]any { return map[string]any{"thread": h.f.thread, "cursor": "x"} }, "cursor")
	add("claim mark", "human", func(h *hostileSetup) map[string]any {
		return map[string]any{"claim": h.new().claim, "state": "refuted"}
	}, "claim", "state")
	add("artifact_put", "writer", func(*hostileSetup) map[string]any {
		return map[string]any{"content_base64": "aGk=", "media_type": "text/plain"}
	}, "content_base64", "media_type")
	add("artifact_get", "writer", func(*hostileSetup) map[string]any { return map[string]any{"ref": storedArtifact} }, "ref")
	add("key_register", "writer", func(*hostileSetup) map[string]any { return map[string]any{"public_key": newPublicKey()} }, "public_key")
	add("list keys", "writer", func(*hostileSetup) map[string]any { return map[string]any{"identity": creatorIdentity} }, "identity")
	add("search", "writer", func(h *hostileSetup) map[string]any {
		return map[string]any{"q": "port", "thread": h.f.thread, "kind": "ask", "author": creatorIdentity, "state": "open", "cursor": "x"}
	}, "q", "thread", "kind", "author", "state", "cursor")
	// § 16: room names and titles, in the rooms' writes and in every room field that reads.
	add("create room", "human", func(*hostileSetup) map[string]any {
		return map[string]any{"name": fmt.Sprintf("hostile-%d", roomsMade.Add(1)), "title": "T", "description": "D", "parent": otherRoom}
	}, "name", "title", "description", "parent")
	add("update room", "human", func(*hostileSetup) map[string]any {
		return map[string]any{"room": otherRoom, "title": "Elsewhere", "description": "D"}
	}, "room", "title", "description")
	add("send ask", "writer", func(*hostileSetup) map[string]any {
		return map[string]any{"kind": "ask", "body": "Which room?", "room": "general"}
	}, "room")
	add("list_threads", "writer", func(*hostileSetup) map[string]any { return map[string]any{"room": "general"} }, "room")
	add("inbox", "writer", func(*hostileSetup) map[string]any { return map[string]any{"room": "general"} }, "room")
	add("search", "writer", func(*hostileSetup) map[string]any { return map[string]any{"q": "port", "room": "general"} }, "room")
	add("claim_graph", "writer", func(*hostileSetup) map[string]any { return map[string]any{"room": "general"} }, "room")
	add("thread_move", "human", func(h *hostileSetup) map[string]any { return map[string]any{"thread": h.f.thread, "room": "general"} }, "room")
	// § 17 and § 18: an identity read, and the message and reason of a hide (each on a fresh
	// visible message: an accepted hide takes the thread's root) and an unhide.
	add("identity_read", "writer", func(*hostileSetup) map[string]any { return map[string]any{"identity": creatorIdentity} }, "identity")
	add("message_hide", "lock holder", func(h *hostileSetup) map[string]any {
		return map[string]any{"message": h.new().root, "reason": "Withdrawn."}
	}, "message", "reason")
	add("message_unhide", "lock holder", func(h *hostileSetup) map[string]any { return map[string]any{"message": h.f.root} }, "message")
	return fields
}

// put sets the field at a dotted path (evidence.0.ref) to hostileMark.
func put(m map[string]any, path string) {
	keys := strings.Split(path, ".")
	var v any = m
	for i, k := range keys {
		last := i == len(keys)-1
		switch o := v.(type) {
		case map[string]any:
			if last {
				o[k] = hostileMark
				return
			}
			v = o[k]
		case []any:
			var n int
			fmt.Sscan(k, &n)
			if last {
				o[n] = hostileMark
				return
			}
			v = o[n]
		}
	}
}

// Every string field of every operation's input, with each hostile value, over HTTP and MCP:
// refused with a reason of § 9 and nothing in the database changed, or accepted and then read
// back byte for byte. Every refusal is scanned for tokens, hashes and SQL.
func TestHostileStrings(t *testing.T) {
	fields := hostileFields()
	values := hostileValues()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		t.Parallel() // the two databases side by side: each has its own server
		s := newServer(t, db, relaxedLimits())
		c := newCast(s)
		leaks := newLeakScanner(t, s)
		if _, err := asMap(s.svc.PutArtifactInput)(context.Background(), c.agent,
			[]byte(`{"content_base64":"`+operationInput("artifact_put")["content_base64"].(string)+`"}`)); err != nil {
			t.Fatal(err)
		}
		dirty := true      // the database changed since before was taken
		claimUsed := false // an accepted case changed the fresh claim
		h := &hostileSetup{f: c.prepare(t, s, threadStates[1], true)}
		fresh := h.f
		h.new = func() fixture {
			// A refused case leaves its claim as it was: the next case may take it again.
			if claimUsed {
				fresh, claimUsed, dirty = c.prepare(t, s, threadStates[1], true), false, true
			}
			return fresh
		}
		var before map[string]any
		rows := newCounter(t, db)
		refused, stored := 0, 0
		for _, hf := range fields {
			for _, v := range values {
				for _, transport := range []string{"HTTP", "MCP"} {
					if transport == "MCP" && hf.op.tool == "" {
						continue
					}
					input := hf.input(h)
					put(input, hf.field)
					if dirty {
						before, dirty = rows.state(t, s, c, h.f), false
					}
					got := s.callHostile(hf.op, transport, c.authorization[hf.as], input, v)
					where := fmt.Sprintf("%s %s = %s over %s", hf.op.name, hf.field, v.name, transport)
					if got.outcome != "ok" {
						refused++
						if status, known := reasonStatus[got.outcome]; !known || status != got.status {
							t.Errorf("%s: %s, want a reason of § 9 with its status", where, got)
						}
						leaks.check(t, where, got.raw)
						if diff := stateDiff(before, rows.state(t, s, c, h.f)); diff != "" {
							t.Errorf("%s: refused (%s), but the database changed:\n%s", where, got.outcome, diff)
							dirty = true
						}
						continue
					}
					if !hf.op.writes && hf.op.name != "artifact_put" && hf.op.name != "key_register" {
						if diff := stateDiff(before, rows.state(t, s, c, h.f)); diff != "" {
							t.Errorf("%s: a read changed the database:\n%s", where, diff)
							dirty = true
						}
						continue
					}
					stored++
					dirty, claimUsed = true, true
					want := v.bytes
					if hf.field == "content_base64" && transport == "MCP" { // stored is what the base64 stands for
						decoded, err := base64.StdEncoding.DecodeString(v.bytes)
						if err != nil {
							t.Errorf("%s: accepted %q as base64", where, clip(v.bytes, 40))
							continue
						}
						want = string(decoded)
					}
					if v.bytes == "" || !readsBack(t, s, c, hf.op, got.result, want) {
						t.Errorf("%s: accepted, but the value is not read back byte for byte: %s", where, got)
					}
				}
			}
		}
		t.Logf("hostile strings on %s: %d fields × %d values, %d refused, %d stored and read back", db.Kind(), len(fields), len(values), refused, stored)
	})
}

func operationInput(name string) map[string]any {
	_, standalone := operations()
	for _, op := range standalone {
		if op.name == name {
			return op.input(fixture{}, "")
		}
	}
	panic(name)
}

// callHostile sends input with v where hostileMark stands: in a JSON body as v's literal, in
// a path or query as v's bytes.
func (s *server) callHostile(op operation, transport, authorization string, input map[string]any, v hostileValue) answer {
	s.t.Helper()
	mark, _ := json.Marshal(hostileMark)
	if transport == "MCP" {
		args, err := json.Marshal(input)
		if err != nil {
			s.t.Fatal(err)
		}
		return s.callTool(authorization, op.tool, bytes.Replace(args, mark, v.literal, 1))
	}
	if op.name == "artifact_put" { // the artifact is the body, its media type the header
		body, contentType := []byte("hi"), "text/plain"
		if input["content_base64"] == hostileMark {
			body = []byte(v.bytes)
		} else {
			contentType = v.bytes
		}
		resp, raw := s.sendRaw(op.method, op.path, authorization, contentType, body)
		return overHTTP(resp, raw)
	}
	target, contentType, body := op.httpRequest(input)
	target = strings.Replace(target, url.PathEscape(hostileMark), url.PathEscape(v.bytes), 1)
	target = strings.Replace(target, url.QueryEscape(hostileMark), url.QueryEscape(v.bytes), 1)
	body = bytes.Replace(body, mark, v.literal, 1)
	resp, raw := s.sendRaw(op.method, target, authorization, contentType, body)
	return overHTTP(resp, raw)
}

// readsBack reads what an accepted write stored, through the operation layer, and looks for
// value among its strings.
func readsBack(t *testing.T, s *server, c *cast, op operation, result map[string]any, value string) bool {
	t.Helper()
	var read map[string]any
	var err error
	ctx := context.Background()
	switch {
	case op.name == "artifact_put":
		art, err := s.svc.GetArtifact(ctx, c.agent, []byte(`{"ref":"`+at(result, "ref")+`"}`))
		if err != nil {
			t.Fatalf("reading back: %v", err)
		}
		return string(art.Content) == value || art.MediaType == value
	case op.name == "send note" || op.name == "send ask":
		read, err = asMap(s.svc.ReadThread)(ctx, c.agent, []byte(`{"thread":"`+at(result, "thread", "id")+`"}`))
	case op.moderation != "":
		// A hide's reason is for humans (§ 18): a human on the pages reads it back.
		read, err = asMap(s.svc.ReadThread)(ctx, protocol.HumanActor("setup"), []byte(`{"thread":"`+at(result, "message", "thread")+`"}`))
	case op.name == "create room" || op.name == "update room":
		read, err = asMap(s.svc.ListRooms)(ctx, c.agent, []byte(`{}`))
	default:
		read, err = asMap(s.svc.ReadClaim)(ctx, c.agent, []byte(`{"claim":"`+at(result, "claim", "id")+`"}`))
	}
	if err != nil {
		t.Fatalf("reading back: %v", err)
	}
	return containsString(read, value)
}

func containsString(v any, s string) bool {
	switch o := v.(type) {
	case string:
		return o == s
	case map[string]any:
		for _, x := range o {
			if containsString(x, s) {
				return true
			}
		}
	case []any:
		for _, x := range o {
			if containsString(x, s) {
				return true
			}
		}
	}
	return false
}

// sendRaw writes one HTTP/1.1 request on a connection of its own, byte for byte as given:
// Go's client would refuse to send some of the bytes of a hostile value (a NUL in a header).
func (s *server) sendRaw(method, target, authorization, contentType string, body []byte) (*http.Response, []byte) {
	s.t.Helper()
	host := strings.TrimPrefix(s.base, "http://")
	conn, err := net.Dial("tcp", host)
	if err != nil {
		s.t.Fatal(err)
	}
	defer conn.Close()
	if err := conn.SetDeadline(time.Now().Add(60 * time.Second)); err != nil {
		s.t.Fatal(err)
	}
	var req bytes.Buffer
	fmt.Fprintf(&req, "%s %s HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n", method, target, host)
	if authorization != "" {
		fmt.Fprintf(&req, "Authorization: %s\r\n", authorization)
	}
	if contentType != "" {
		fmt.Fprintf(&req, "Content-Type: %s\r\n", contentType)
	}
	if body != nil {
		fmt.Fprintf(&req, "Content-Length: %d\r\n", len(body))
	}
	req.WriteString("\r\n")
	req.Write(body)
	if _, err := conn.Write(req.Bytes()); err != nil {
		s.t.Fatalf("%s %.100s: %v", method, target, err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		s.t.Fatalf("%s %.100s: no answer: %v", method, target, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		s.t.Fatal(err)
	}
	return resp, raw
}

// counter counts the rows of every table of the database in one statement.
type counter struct {
	db    *storage.DB
	query string
}

func newCounter(t *testing.T, db *storage.DB) *counter {
	t.Helper()
	var tables []string
	list := "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name"
	if db.Kind() == storage.Postgres {
		list = "SELECT tablename FROM pg_tables WHERE schemaname = current_schema() ORDER BY tablename"
	}
	if err := db.NewRaw(list).Scan(context.Background(), &tables); err != nil {
		t.Fatalf("listing the tables: %v", err)
	}
	parts := make([]string, len(tables))
	for i, table := range tables {
		parts[i] = fmt.Sprintf(`SELECT '%s' AS name, COUNT(*) AS n FROM "%s"`, table, table)
	}
	return &counter{db: db, query: strings.Join(parts, " UNION ALL ")}
}

// state is the number of rows of every table, and the thread the cases name as read_thread
// reads it (its state, messages and claims): what a refusal must leave as it was.
func (k *counter) state(t *testing.T, s *server, c *cast, f fixture) map[string]any {
	t.Helper()
	var rows []struct {
		Name string `bun:"name"`
		N    int64  `bun:"n"`
	}
	if err := k.db.NewRaw(k.query).Scan(context.Background(), &rows); err != nil {
		t.Fatalf("counting the rows: %v", err)
	}
	out := map[string]any{"thread": c.snapshot(t, s, f)}
	for _, r := range rows {
		out[r.Name] = r.N
	}
	return out
}
