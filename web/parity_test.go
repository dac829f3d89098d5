package web_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/parleyforum/parley/protocol"
	"github.com/parleyforum/parley/storage"
	"github.com/parleyforum/parley/storage/storagetest"
)

// § 10: "the same request gives the same decision and the same reason over both". Each case
// is one operation call, given once as a tool call; the HTTP request is derived from it by
// the routes of § 10. The call is made over each transport on a forum of its own, prepared
// alike, so that the answers are comparable to the byte: the same outcome, the same reason,
// status and message, and for a result the same object (times aside).
type parityCase struct {
	name    string
	limits  func(*protocol.Limits) // nil: the reference limits
	only    storage.Kind           // "": both databases
	prepare func(f *forum, th, msg string)
	as      string // who calls: a forum caller, "" for no header, or a header value of its own
	tool    string
	args    string // JSON; $th and $msg stand for the fresh thread and its ask
	want    string // "ok" or the reason
}

func TestParityOfMCPAndHTTP(t *testing.T) {
	answered := func(f *forum, th, _ string) {
		f.send(f.bob, `{"kind":"answer","thread":"`+th+`","body":"8080."}`)
	}
	closed := func(f *forum, th, msg string) {
		answered(f, th, msg)
		f.send(f.mod, `{"kind":"close","thread":"`+th+`","body":"Settled."}`)
	}
	big := strings.Repeat("x", protocol.DefaultLimits().RequestMaxBytes)
	cases := []parityCase{
		// Accepted.
		{name: "manifest without a token", tool: "get_manifest", want: "ok"},
		{name: "manifest of a lock holder", as: "mod", tool: "get_manifest", args: `{}`, want: "ok"},
		{name: "ask opening a thread", as: "bob", tool: "send", args: `{"parley":"1","kind":"ask","body":"Another question?","from":{"extension":"w2"},"provenance":{"model":"m","client":"c"}}`, want: "ok"},
		{name: "answer", as: "bob", tool: "send", args: `{"kind":"answer","thread":"$th","body":"8080, by default."}`, want: "ok"},
		{name: "note by parent alone", as: "bob", tool: "send", args: `{"kind":"note","parent":"$msg","body":"Worth a look."}`, want: "ok"},
		{name: "decide by the creator", as: "alice", prepare: answered, tool: "send", args: `{"kind":"decide","thread":"$th","body":"We keep 8080."}`, want: "ok"},
		{name: "read a thread", as: "reader", prepare: answered, tool: "read_thread", args: `{"thread":"$th"}`, want: "ok"},
		{name: "read a thread by its number", as: "reader", tool: "read_thread", args: `{"thread":"1"}`, want: "ok"},
		{name: "list threads", as: "reader", prepare: answered, tool: "list_threads", args: `{"state":"answered","limit":1}`, want: "ok"},
		{name: "read events", as: "alice", prepare: closed, tool: "read_events", args: `{"thread":"$th"}`, want: "ok"},
		{name: "inbox of the one asked", as: "bob", tool: "inbox", args: `{"limit":10,"wait_seconds":10}`, want: "ok"},
		{name: "inbox of one extension", as: "alice", tool: "inbox", args: `{"extension":"w1","wait_seconds":10}`, want: "ok",
			prepare: func(f *forum, th, msg string) {
				f.send(f.bob, `{"kind":"ask","thread":"`+th+`","parent":"`+msg+`","body":"Which server?"}`)
				f.send(f.alice, `{"kind":"ask","from":{"extension":"w1"},"body":"w1 asks too."}`)
				f.send(f.bob, `{"kind":"answer","thread":"th_2","body":"Here."}`)
			}},
		{name: "confirm", as: "mod", prepare: answered, tool: "confirm", args: `{"thread":"$th"}`, want: "ok"},
		{name: "mark", as: "human", prepare: answered, tool: "mark", args: `{"thread":"$th","state":"rejected"}`, want: "ok"},
		{name: "search", as: "reader", prepare: answered, tool: "search", args: `{"q":"port* -nothing","thread":"$th","kind":"ask","author":"ainotes:alice","state":"answered","limit":5}`, want: "ok"},

		// Refused, one case or more for every reason of § 9 the core gives today.
		{name: "an unknown kind", as: "alice", tool: "send", args: `{"kind":"shout","thread":"$th","body":"Hey"}`, want: "invalid_body"},
		{name: "an unknown field", as: "alice", tool: "send", args: `{"kind":"note","thread":"$th","body":"Hey","colour":"red"}`, want: "invalid_body"},
		{name: "an unknown argument to a read", as: "alice", tool: "read_thread", args: `{"thread":"$th","depth":"2"}`, want: "invalid_body"},
		{name: "an argument to the manifest", tool: "get_manifest", args: `{"verbose":"yes"}`, want: "invalid_body"},
		{name: "an id of the wrong form", as: "alice", tool: "read_thread", args: `{"thread":"msg_1"}`, want: "invalid_body"},
		{name: "a page cursor the server never gave", as: "alice", tool: "read_thread", args: `{"thread":"$th","cursor":"cjEuMS4xLjEuMA"}`, want: "invalid_body"},
		{name: "a cursor not given", as: "alice", tool: "inbox", args: `{"since":"made-up"}`, want: "invalid_body"},
		{name: "a search with no word", as: "alice", tool: "search", args: `{"q":"-port"}`, want: "invalid_body"},
		{name: "no token", tool: "send", args: `{"kind":"ask","body":"Anyone?"}`, want: "unauthenticated"},
		{name: "no token, a bad body", tool: "send", args: `{"kind":"shout"}`, want: "unauthenticated"},
		{name: "an unknown token", as: "Bearer parley_unknown", tool: "inbox", args: `{}`, want: "unauthenticated"},
		{name: "an unknown token on the manifest", as: "Bearer parley_unknown", tool: "get_manifest", want: "unauthenticated"},
		{name: "another scheme", as: "Basic YWxpY2U6c2VjcmV0", tool: "list_threads", want: "unauthenticated"},
		{name: "a token that only reads", as: "reader", tool: "send", args: `{"kind":"note","thread":"$th","body":"I only read."}`, want: "token_right_missing"},
		{name: "confirm without lock", as: "alice", prepare: answered, tool: "confirm", args: `{"thread":"$th"}`, want: "token_right_missing"},
		{name: "mark by an agent", as: "mod", tool: "mark", args: `{"thread":"$th","state":"open"}`, want: "token_right_missing"},
		{name: "decide without authority", as: "bob", tool: "send", args: `{"kind":"decide","thread":"$th","body":"8080."}`, want: "thread_authority_missing"},
		{name: "an unknown thread", as: "alice", tool: "read_thread", args: `{"thread":"th_999999"}`, want: "not_found"},
		{name: "an unknown parent", as: "bob", tool: "send", args: `{"kind":"answer","parent":"msg_999999","body":"To what?"}`, want: "not_found"},
		{name: "an over-long request", as: "alice", tool: "send", args: `{"kind":"note","thread":"$th","body":"` + big + `"}`, want: "payload_too_large"},
		{name: "an over-long request without a token", tool: "send", args: `{"kind":"shout","body":"` + big + `"}`, want: "payload_too_large"},
		{name: "answering oneself", as: "alice", tool: "send", args: `{"kind":"answer","thread":"$th","body":"I answer myself."}`, want: "self_reply"},
		{name: "a note on a closed thread", as: "bob", prepare: closed, tool: "send", args: `{"kind":"note","thread":"$th","body":"One more thing."}`, want: "thread_closed"},
		{name: "three steps at once", as: "alice", tool: "send", args: `{"kind":"close","thread":"$th","body":"Done."}`, want: "invalid_transition"},
		{name: "confirming what is confirmed", as: "mod", tool: "confirm", args: `{"thread":"$th"}`, want: "invalid_transition"},
		{name: "a thread full", as: "bob", prepare: answered, limits: func(l *protocol.Limits) { l.ThreadMaxMessages = 2 },
			tool: "send", args: `{"kind":"note","thread":"$th","body":"A third message."}`, want: "limit_exceeded"},
		{name: "a thread too deep", as: "alice", prepare: answered, limits: func(l *protocol.Limits) { l.ThreadMaxDepth = 1 },
			tool: "send", args: `{"kind":"ask","thread":"$th","parent":"msg_2","body":"Why 8080?"}`, want: "limit_exceeded"},
		{name: "too many writes", as: "alice", limits: func(l *protocol.Limits) { l.WritesPerMinute = 1 },
			tool: "send", args: `{"kind":"ask","body":"A second write within the minute."}`, want: "rate_limited"},
		{name: "an idempotency key reused with another input", as: "bob",
			prepare: func(f *forum, th, _ string) {
				r := f.do(request{method: http.MethodPost, target: "/v1/messages", token: f.bob,
					body:   `{"kind":"note","thread":"` + th + `","body":"Noted once."}`,
					header: map[string]string{"Idempotency-Key": "parity-1"}})
				if r.status != http.StatusCreated {
					f.t.Fatalf("the first write under the key: %d %s", r.status, r.body)
				}
			},
			tool: "send", args: `{"kind":"note","thread":"$th","body":"Noted twice.","idempotency_key":"parity-1"}`,
			want: "idempotency_conflict"},
		{name: "the database gone", only: storage.Postgres, as: "alice",
			prepare: func(f *forum, _, _ string) { takeDown(f.t, f.db) },
			tool:    "read_thread", args: `{"thread":"$th"}`, want: "unavailable"},
	}
	cases = append(append(append(cases, claimParityCases()...), evidenceParityCases()...), identityParityCases()...)
	reasons := map[string]bool{}
	for _, c := range cases {
		reasons[c.want] = true
	}
	for _, r := range protocol.Reasons {
		if !reasons[string(r.Reason)] {
			t.Errorf("no case for reason %s", r.Reason)
		}
	}

	for _, kind := range storagetest.Kinds() {
		t.Run(string(kind), func(t *testing.T) {
			for _, c := range cases {
				if c.only != "" && c.only != kind {
					continue
				}
				t.Run(c.name, func(t *testing.T) {
					overHTTP := runOverHTTP(t, kind, c)
					overMCP := runOverMCP(t, kind, c)
					if overHTTP.outcome != c.want {
						t.Errorf("over HTTP: %s, want %s: %s", overHTTP.outcome, c.want, overHTTP.raw)
					}
					if overMCP.outcome != c.want {
						t.Errorf("over MCP: %s, want %s: %s", overMCP.outcome, c.want, overMCP.raw)
					}
					if diff := cmp.Diff(overHTTP.answer, overMCP.answer); diff != "" {
						t.Errorf("the answers differ (-HTTP +MCP):\n%s", diff)
					}
				})
			}
		})
	}
}

// parityAnswer is one transport's answer: "ok" or the reason, with the status of an HTTP
// answer (for MCP, the refusal's own status, or what HTTP would say for a result) and the
// object, comparable.
type parityAnswer struct {
	outcome string
	answer  any
	raw     string
}

// preparedForum is a fresh forum in which Alice has asked, prepared for c.
func preparedForum(t *testing.T, kind storage.Kind, c parityCase) (f *forum, th, msg string) {
	t.Helper()
	limits := protocol.DefaultLimits()
	if c.limits != nil {
		c.limits(&limits)
	}
	f = newForum(t, storagetest.Open(t, kind), limits)
	th, msg = f.ask(f.alice, "Which port does the server use?")
	if c.prepare != nil {
		c.prepare(f, th, msg)
	}
	return f, th, msg
}

// authorization is the Authorization header of a case's caller.
func (f *forum) authorization(as string) string {
	secret := map[string]string{"alice": f.alice, "bob": f.bob, "reader": f.reader, "mod": f.mod, "human": f.human}[as]
	if secret != "" {
		return "Bearer " + secret
	}
	return as
}

func runOverMCP(t *testing.T, kind storage.Kind, c parityCase) parityAnswer {
	t.Helper()
	f, th, msg := preparedForum(t, kind, c)
	cs := f.mcpAs(f.authorization(c.as))
	params := &mcp.CallToolParams{Name: c.tool}
	if c.args != "" {
		params.Arguments = json.RawMessage(fill(c.args, th, msg))
	}
	res, err := cs.CallTool(context.Background(), params)
	if err != nil {
		t.Fatalf("over MCP: %v", err)
	}
	raw, err := json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	text := ""
	if tc, isText := res.Content[0].(*mcp.TextContent); isText && len(res.Content) == 1 {
		text = tc.Text
	}
	var obj map[string]any
	if err := json.Unmarshal(raw, &obj); err != nil {
		t.Fatalf("over MCP: structuredContent %s: %v", raw, err)
	}
	if !res.IsError {
		if !sameJSONText(text, raw) {
			t.Errorf("over MCP: text content %s is not structuredContent %s", text, raw)
		}
		return parityAnswer{"ok", comparable(okStatus(c.tool), obj), string(raw)}
	}
	reason, _ := obj["reason"].(string)
	if message, _ := obj["message"].(string); text != reason+": "+message {
		t.Errorf("over MCP: text %q, want %q", text, reason+": "+message)
	}
	status, _ := obj["status"].(float64)
	return parityAnswer{reason, comparable(int(status), obj), string(raw)}
}

func runOverHTTP(t *testing.T, kind storage.Kind, c parityCase) parityAnswer {
	t.Helper()
	f, th, msg := preparedForum(t, kind, c)
	args, key := withoutKey(t, fill(c.args, th, msg))
	req := httpOf(t, c.tool, args)
	req.header = map[string]string{"Authorization": f.authorization(c.as)}
	if key != "" {
		req.header["Idempotency-Key"] = key // MCP's argument is HTTP's header (§ 15)
	}
	r := f.do(req)
	outcome := "ok"
	if r.status >= 400 {
		outcome = r.reason()
	}
	if format := graphFormat(c); outcome == "ok" && format != "" && format != "json" {
		// The graph as a document: over MCP its text is the content of {format, media_type, content}.
		media, _, _ := strings.Cut(r.header.Get("Content-Type"), ";")
		r.json = map[string]any{"format": format, "media_type": media, "content": string(r.body)}
	}
	return parityAnswer{outcome, comparable(r.status, r.json), string(r.body)}
}

// withoutKey takes the MCP argument idempotency_key out of a call's arguments, for the header.
func withoutKey(t *testing.T, args string) (string, string) {
	t.Helper()
	if !strings.Contains(args, protocol.IdempotencyKeyArgument) {
		return args, ""
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(args), &m); err != nil {
		t.Fatal(err)
	}
	key, _ := m[protocol.IdempotencyKeyArgument].(string)
	delete(m, protocol.IdempotencyKeyArgument)
	raw, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return string(raw), key
}

// okStatus is the HTTP status of an accepted call of the tool.
func okStatus(tool string) int {
	if tool == "send" || tool == "claim_assert" || tool == "key_register" {
		return http.StatusCreated
	}
	return http.StatusOK
}

// httpOf is the HTTP request of § 10's routes for a tool call: the thread goes into the
// path, the other arguments into the query of a GET or the JSON body of a POST.
func httpOf(t *testing.T, tool, args string) request {
	t.Helper()
	routes := map[string]struct{ method, path string }{
		"get_manifest":  {http.MethodGet, "/v1/manifest"},
		"send":          {http.MethodPost, "/v1/messages"},
		"read_thread":   {http.MethodGet, "/v1/threads/{thread}"},
		"list_threads":  {http.MethodGet, "/v1/threads"},
		"read_events":   {http.MethodGet, "/v1/threads/{thread}/events"},
		"inbox":         {http.MethodGet, "/v1/inbox"},
		"confirm":       {http.MethodPost, "/v1/threads/{thread}/confirm"},
		"mark":          {http.MethodPost, "/v1/threads/{thread}/mark"},
		"claim_assert":  {http.MethodPost, "/v1/claims"},
		"claim_attest":  {http.MethodPost, "/v1/claims/{claim}/attest"},
		"claim_refute":  {http.MethodPost, "/v1/claims/{claim}/refute"},
		"claim_verify":  {http.MethodPost, "/v1/claims/{claim}/verify"},
		"claim_read":    {http.MethodGet, "/v1/claims/{claim}"},
		"claim_graph":   {http.MethodGet, "/v1/graph"},
		"key_register":  {http.MethodPut, "/v1/keys"},
		"search":        {http.MethodGet, "/v1/search"},
		"identity_read": {http.MethodGet, "/v1/identities/{identity}"},
	}
	route := routes[tool]
	if tool == "send" || tool == "claim_assert" {
		return request{method: route.method, target: route.path, body: args}
	}
	fields := map[string]any{}
	if args != "" {
		if err := json.Unmarshal([]byte(args), &fields); err != nil {
			t.Fatalf("case arguments %s: %v", args, err)
		}
	}
	path := route.path
	for _, field := range []string{"thread", "claim", "identity"} {
		if strings.Contains(path, "{"+field+"}") {
			path = strings.Replace(path, "{"+field+"}", url.PathEscape(fmt.Sprint(fields[field])), 1)
			delete(fields, field)
		}
	}
	if route.method == http.MethodPost || route.method == http.MethodPut {
		body := ""
		if len(fields) > 0 {
			b, _ := json.Marshal(fields)
			body = string(b)
		}
		return request{method: route.method, target: path, body: body}
	}
	query := url.Values{}
	for k, v := range fields {
		query.Set(k, fmt.Sprint(v))
	}
	if len(query) > 0 {
		path += "?" + query.Encode()
	}
	return request{method: route.method, target: path}
}

func fill(args, th, msg string) string {
	return strings.NewReplacer("$th", th, "$msg", msg).Replace(args)
}

// comparable is an answer as the comparison sees it: its status, and its object with the
// times of day taken out (the two forums were written a moment apart), the inbox's cursors
// (positions in each database's own commit order, which on Postgres counts every
// transaction of the server) and, for a refusal to write too often, the seconds to wait (one
// forum's minute began a moment later).
func comparable(status int, obj map[string]any) any {
	return map[string]any{"status": status, "object": withoutTimes(obj)}
}

var (
	timestamp  = regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$`)
	waitFigure = regexp.MustCompile(`\d+ seconds`)
	// embeddedTime is a time inside a document: RFC 3339, or AIF's "2006-01-02 15:04:05".
	embeddedTime = regexp.MustCompile(`\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(\.\d+)?Z?`)
)

// cursorPayload is what a signed cursor says, without its signature.
func cursorPayload(c string) string {
	raw, err := base64.RawURLEncoding.DecodeString(c)
	if err != nil || len(raw) <= 16 {
		return c
	}
	return "<signed " + string(raw[:len(raw)-16]) + ">"
}

func withoutTimes(v any) any {
	switch v := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, inner := range v {
			switch {
			case k == "retry_after":
				out[k] = "<seconds>"
			case k == "realm_key" || k == "verificationMethod" || k == "proofValue":
				// Each forum has a realm key of its own, which signs what it vouches for.
				out[k] = "<realm key>"
			case k == "cursor" && v["items"] != nil:
				out[k] = "<cursor>"
			case k == "cursor" && inner != nil:
				// Each forum signs its cursors with a key of its own: what they say is compared.
				out[k] = cursorPayload(inner.(string))
			case k == "content" && v["format"] != nil: // a graph document: the times inside it
				out[k] = embeddedTime.ReplaceAllString(inner.(string), "<time>")
			case k == "message" && v["reason"] == string(protocol.ReasonRateLimited):
				out[k] = waitFigure.ReplaceAllString(inner.(string), "<n> seconds")
			default:
				out[k] = withoutTimes(inner)
			}
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i := range v {
			out[i] = withoutTimes(v[i])
		}
		return out
	case string:
		if timestamp.MatchString(v) {
			return "<time>"
		}
	}
	return v
}

// sameJSONText compares JSON texts by their values.
func sameJSONText(a string, b []byte) bool {
	var x, y any
	if json.Unmarshal([]byte(a), &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	return cmp.Equal(x, y)
}
