package mcpserver_test

import (
	"context"
	"encoding/base64"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"github.com/parleyforum/parley/protocol"
	"github.com/parleyforum/parley/protocol/mcpserver"
	"github.com/parleyforum/parley/storage"
	"github.com/parleyforum/parley/storage/storagetest"
)

// A tools/call the handler answers itself gets the answer the SDK gives: the same status,
// headers and JSON, for results, refusals and what the SDK keeps for itself. Two forums are
// prepared alike, one answering as the handler does, one handing every request to the SDK,
// and each request goes to both.
func TestDirectAnswersAreTheSDKs(t *testing.T) {
	for _, kind := range storagetest.Kinds() {
		t.Run(string(kind), func(t *testing.T) {
			direct := newPairedForum(t, storagetest.Open(t, kind), false)
			viaSDK := newPairedForum(t, storagetest.Open(t, kind), true)
			for _, c := range directCases {
				got, want := direct.exchange(t, c), viaSDK.exchange(t, c)
				if got != want {
					t.Errorf("%s:\n answered directly %s\n by the SDK        %s", c.name, got, want)
				}
			}
		})
	}
}

// Which calls the handler answers itself: a plain tools/call of a known tool, as clients
// send it; anything the SDK would refuse or answer otherwise goes to the SDK.
func TestWhichCallsAreAnsweredDirectly(t *testing.T) {
	svc := protocol.New(storagetest.Open(t, storage.SQLite), protocol.Options{})
	h := mcpserver.New(svc, mcpserver.Options{Logger: slog.New(slog.DiscardHandler)})
	loopback := &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 8080}
	for _, c := range []struct {
		name   string
		method string
		body   string
		header map[string]string
		host   string
		want   bool
	}{
		{name: "a call", want: true},
		{name: "a call under 2025-06-18", header: map[string]string{"MCP-Protocol-Version": "2025-06-18"}, want: true},
		{name: "a call under 2024-11-05", header: map[string]string{"MCP-Protocol-Version": "2024-11-05"}, want: true},
		{name: "Accept */*", header: map[string]string{"Accept": "*/*"}, want: true},
		{name: "Content-Type with a charset", header: map[string]string{"Content-Type": "application/json; charset=utf-8"}, want: true},
		{name: "a string id", body: `{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"send","arguments":{}}}`, want: true},
		{name: "no arguments", body: `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_manifest"}}`, want: true},
		{name: "localhost", host: "localhost:8080", want: true},
		{name: "a foreign Host on a loopback listener", host: "evil.example", want: false},
		{name: "Accept JSON only", header: map[string]string{"Accept": "application/json"}, want: false},
		{name: "Accept an event stream only", header: map[string]string{"Accept": "text/event-stream"}, want: false},
		{name: "Content-Type text", header: map[string]string{"Content-Type": "text/plain"}, want: false},
		{name: "a newer protocol", header: map[string]string{"MCP-Protocol-Version": "2026-07-28"}, want: false},
		{name: "an unknown protocol", header: map[string]string{"MCP-Protocol-Version": "1999-01-01"}, want: false},
		{name: "Last-Event-ID", header: map[string]string{"Last-Event-ID": "1"}, want: false},
		{name: "GET", method: http.MethodGet, want: false},
		{name: "tools/list", body: `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, want: false},
		{name: "initialize", body: `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`, want: false},
		{name: "an unknown tool", body: `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"nope","arguments":{}}}`, want: false},
		{name: "_meta", body: `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"_meta":{"progressToken":1},"name":"send","arguments":{}}}`, want: false},
		{name: "a notification", body: `{"jsonrpc":"2.0","method":"tools/call","params":{"name":"send","arguments":{}}}`, want: false},
	} {
		t.Run(c.name, func(t *testing.T) {
			body := c.body
			if body == "" {
				body = `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"send","arguments":{"kind":"ask","body":"b"}}}`
			}
			method := c.method
			if method == "" {
				method = http.MethodPost
			}
			r := httptest.NewRequest(method, "http://127.0.0.1:8080/mcp", strings.NewReader(body))
			r = r.WithContext(context.WithValue(r.Context(), http.LocalAddrContextKey, net.Addr(loopback)))
			r.Host = "127.0.0.1:8080"
			if c.host != "" {
				r.Host = c.host
			}
			r.Header.Set("Content-Type", "application/json")
			r.Header.Set("Accept", "application/json, text/event-stream")
			for k, v := range c.header {
				r.Header.Set(k, v)
			}
			if got := mcpserver.AnswersDirectly(h, r, []byte(body)); got != c.want {
				t.Errorf("answered directly: %v, want %v", got, c.want)
			}
		})
	}
}

// directCase is one request, sent as alice, bob or nobody.
type directCase struct {
	name   string
	as     string // "alice", "bob", "bad" (a token nobody has), or "" (no header)
	body   string
	header map[string]string
}

// toolCall is a tools/call request of name with args ("" for none) under id.
func toolCall(id, name, args string) string {
	params := `{"name":"` + name + `"`
	if args != "" {
		params += `,"arguments":` + args
	}
	return `{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":` + params + `}}`
}

var directCases = []directCase{
	{name: "an ask", as: "alice", body: toolCall("1", "send", `{"kind":"ask","body":"Which port? <b>&amp;</b> \u00e9"}`)},
	{name: "an answer", as: "bob", body: toolCall("2", "send", `{"kind":"answer","thread":"th_1","body":"8080."}`)},
	{name: "a self reply", as: "bob", body: toolCall("3", "send", `{"kind":"note","thread":"th_1","parent":"msg_2","body":"me"}`)},
	{name: "read_thread", as: "alice", body: toolCall("4", "read_thread", `{"thread":"th_1"}`)},
	{name: "read_events", as: "alice", body: toolCall("5", "read_events", `{"thread":"th_1"}`)},
	{name: "list_threads", as: "bob", body: toolCall("6", "list_threads", `{}`)},
	{name: "inbox", as: "alice", body: toolCall("7", "inbox", `{}`)},
	{name: "a thread not found", as: "alice", body: toolCall("8", "read_thread", `{"thread":"th_99"}`)},
	{name: "an unknown field", as: "alice", body: toolCall("9", "send", `{"kind":"ask","body":"x","color":"red"}`)},
	{name: "arguments too large", as: "alice", body: toolCall("10", "send", `{"kind":"ask","body":"`+strings.Repeat("x", 17000)+`"}`)},
	{name: "get_manifest without a token", body: toolCall("11", "get_manifest", "")},
	{name: "get_manifest with a token", as: "bob", body: toolCall("12", "get_manifest", `null`)},
	{name: "send without a token", body: toolCall("13", "send", `{"kind":"ask","body":"x"}`)},
	{name: "send with an unknown token", as: "bad", body: toolCall("14", "send", `{"kind":"ask","body":"x"}`)},
	{name: "a string id", as: "alice", body: toolCall(`"a<b>\u0041"`, "read_thread", `{"thread":"th_1"}`)},
	{name: "a string id with control characters", as: "alice", body: toolCall(`"\u0001\t\u2028\ud83d\ude00\\\"x"`, "read_thread", `{"thread":"th_1"}`)},
	{name: "id 0", as: "alice", body: toolCall("-0", "read_thread", `{"thread":"th_1"}`)},
	{name: "the largest id", as: "alice", body: toolCall("9007199254740991", "read_thread", `{"thread":"th_1"}`)},
	{name: "under 2025-06-18", as: "alice", header: map[string]string{"MCP-Protocol-Version": "2025-06-18"}, body: toolCall("15", "list_threads", `{"limit":1}`)},
	{name: "under 2026-07-28", as: "alice", header: map[string]string{"MCP-Protocol-Version": "2026-07-28"}, body: toolCall("16", "list_threads", `{}`)},
	{name: "Accept JSON only", as: "alice", header: map[string]string{"Accept": "application/json"}, body: toolCall("17", "list_threads", `{}`)},
	{name: "an unknown tool", as: "alice", body: toolCall("18", "nope", `{}`)},
	{name: "_meta", as: "alice", body: `{"jsonrpc":"2.0","id":19,"method":"tools/call","params":{"_meta":{"progressToken":"p"},"name":"list_threads","arguments":{}}}`},
	{name: "tools/list", body: `{"jsonrpc":"2.0","id":20,"method":"tools/list"}`},
	{name: "a note with separators and quotes", as: "alice", body: toolCall("22", "send", `{"kind":"note","thread":"th_1","body":"a\u2028b\u2029c \"q\" \\ \u0007 \ud83d\ude00"}`)},
	{name: "a decision", as: "alice", body: toolCall("21", "send", `{"kind":"decide","thread":"th_1","body":"We keep 8080."}`)},
}

// pairedForum is a forum served by a handler that answers calls itself or hands all to the
// SDK, with alice's and bob's tokens.
type pairedForum struct {
	url    string
	tokens map[string]string
}

func newPairedForum(t *testing.T, db *storage.DB, viaSDK bool) *pairedForum {
	// Both forums have one realm key, so that their manifests are the same.
	if err := db.SetSetting(context.Background(), storage.SettingRealmKey, "AQIDBAUGBwgJCgsMDQ4PEBESExQVFhcYGRobHB0eHyA="); err != nil {
		t.Fatal(err)
	}
	f := newForum(t, db, protocol.Limits{})
	h := mcpserver.New(f.svc, mcpserver.Options{Logger: slog.New(slog.DiscardHandler)})
	if viaSDK {
		mcpserver.AllViaSDK(h)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return &pairedForum{url: srv.URL + "/mcp", tokens: map[string]string{
		"alice": f.token("alice", "read,write", false),
		"bob":   f.token("bob", "read,write", false),
		"bad":   "parley_not-a-token-anyone-has",
	}}
}

// times are the timestamps of an answer, the one thing two forums prepared alike answer
// differently.
var times = regexp.MustCompile(`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z`)

// cursors are the cursors of an answer: each forum signs its own with a key of its own
// (PROTOCOL.md § 7), so what they say is compared, without their 16-byte signature.
var cursors = regexp.MustCompile(`(\\?"cursor\\?":\\?")([A-Za-z0-9_-]+)`)

func cursorPayloads(body string) string {
	return cursors.ReplaceAllStringFunc(body, func(m string) string {
		parts := cursors.FindStringSubmatch(m)
		raw, err := base64.RawURLEncoding.DecodeString(parts[2])
		if err != nil || len(raw) <= 16 {
			return m
		}
		payload := inboxHorizon.ReplaceAllString(string(raw[:len(raw)-16]), "${1}${2}<tx>.")
		return parts[1] + "<signed " + payload + ">"
	})
}

// inboxHorizon is the transaction number of an inbox cursor, <list>|i1.<tx>.<seq> (the
// digest of its list first, PROTOCOL.md § 19): on Postgres a number of the whole cluster,
// which the tests of other packages on the same cluster move on between the two forums'
// answers.
var inboxHorizon = regexp.MustCompile(`^([^|]*\|)?(i1\.)\d+\.`)

// exchange sends c and describes the answer: status, the headers a client reads, and the
// body with its timestamps blanked.
func (f *pairedForum) exchange(t *testing.T, c directCase) string {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, f.url, strings.NewReader(c.body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if c.as != "" {
		req.Header.Set("Authorization", "Bearer "+f.tokens[c.as])
	}
	for k, v := range c.header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.Status + " Content-Type=" + resp.Header.Get("Content-Type") + " Cache-Control=" + resp.Header.Get("Cache-Control") +
		" Allow=" + resp.Header.Get("Allow") + "\n" + cursorPayloads(times.ReplaceAllString(string(body), "<time>"))
}
