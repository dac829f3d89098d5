package web_test

import (
	"bufio"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/parleyforum/parley/web"
)

// Every answer is in the terms of the path asked for, whatever was wrong with the request:
// the JSON refusal of § 9 under /v1, a JSON-RPC error object with the HTTP status kept under
// /mcp, and nosniff on each. Found: "Host: a/b" moved the request to another path and was
// answered by a page; at /mcp a wrong Content-Type (415), Accept (400), a foreign Host (403),
// a method other than POST (405) and a body over the limit (413) were answered in plain text.
func TestRefusalsAreInTheTermsOfTheirPath(t *testing.T) {
	f := rawForum(t, web.Timeouts{})
	ping := `{"jsonrpc":"2.0","id":1,"method":"ping"}`
	mcp := func(method, host, contentType, accept, extra string) string {
		return method + " /mcp HTTP/1.1\r\nHost: " + host + "\r\nContent-Type: " + contentType + "\r\nAccept: " + accept +
			"\r\n" + extra + "Content-Length: " + strconv.Itoa(len(ping)) + "\r\n\r\n" + ping
	}
	const (
		jsonType   = "application/json"
		bothAccept = "application/json, text/event-stream"
	)
	for _, c := range []struct {
		name, raw string
		status    int
		answer    string // "v1": § 9's object with reason; "rpc": a JSON-RPC error with code; "page": HTML
		reason    string // for "v1"
		code      int64  // for "rpc"
	}{
		{"/v1: a Host with a slash", "GET /v1/manifest HTTP/1.1\r\nHost: a/b\r\n\r\n", 400, "v1", "invalid_body", 0},
		{"/v1: a Host with a space", "GET /v1/manifest HTTP/1.1\r\nHost: a b\r\n\r\n", 400, "v1", "invalid_body", 0},
		{"/v1: two Host headers", "GET /v1/manifest HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", 400, "v1", "invalid_body", 0},
		{"/v1: no Host in HTTP/1.1", "GET /v1/manifest HTTP/1.1\r\nConnection: close\r\n\r\n", 400, "v1", "invalid_body", 0},
		{"/v1: an absolute target and a bad Host", "GET http://127.0.0.1/v1/manifest HTTP/1.1\r\nHost: a/b\r\n\r\n", 400, "v1", "invalid_body", 0},
		{"/v1: no route", "GET /v1/nothing HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", 404, "v1", "not_found", 0},
		{"/v1: a method the path does not serve", "DELETE /v1/manifest HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", 405, "v1", "not_found", 0},
		{"/mcp: a Host with a slash", mcp("POST", "a/b", jsonType, bothAccept, ""), 400, "rpc", "", -32600},
		{"/mcp: a foreign Host on loopback", mcp("POST", "evil.example", jsonType, bothAccept, ""), 403, "rpc", "", -32600},
		{"/mcp: Content-Type text/plain", mcp("POST", "127.0.0.1", "text/plain", bothAccept, ""), 415, "rpc", "", -32600},
		{"/mcp: Accept without an event stream", mcp("POST", "127.0.0.1", jsonType, "application/json", ""), 400, "rpc", "", -32600},
		{"/mcp: Accept text/html", mcp("POST", "127.0.0.1", jsonType, "text/html", ""), 400, "rpc", "", -32600},
		{"/mcp: GET", "GET /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: " + bothAccept + "\r\n\r\n", 405, "rpc", "", -32600},
		{"/mcp: DELETE", "DELETE /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", 405, "rpc", "", -32600},
		{"/mcp: PUT", mcp("PUT", "127.0.0.1", jsonType, bothAccept, ""), 405, "rpc", "", -32600},
		{"/mcp: a path under it", "GET /mcp/tools HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", 404, "rpc", "", -32600},
		{"/mcp: a body over the largest the server reads", "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nAccept: " +
			bothAccept + "\r\nContent-Length: 99999999\r\n\r\n{}", 413, "rpc", "", -32600},
		{"/mcp: headers over the read buffer", "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: " + strings.Repeat("a", 64<<10) + "\r\n\r\n", 431, "rpc", "", -32600},
		{"/v1: headers over the read buffer", "GET /v1/manifest HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: " + strings.Repeat("a", 64<<10) + "\r\n\r\n", 413, "v1", "payload_too_large", 0},
		{"a page: a Host with a slash", "GET /threads HTTP/1.1\r\nHost: a/b\r\n\r\n", 400, "page", "", 0},
		{"a page: no route", "GET /no/such/page HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", 404, "page", "", 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			resp, body := f.rawAnswer(c.raw)
			if resp.StatusCode != c.status {
				t.Errorf("status %d, want %d: %.200s", resp.StatusCode, c.status, body)
			}
			if got := resp.Header.Get("X-Content-Type-Options"); got != "nosniff" {
				t.Errorf("X-Content-Type-Options %q, want nosniff", got)
			}
			ct := resp.Header.Get("Content-Type")
			switch c.answer {
			case "v1":
				var refusal struct {
					Reason string
					Status int
				}
				if !strings.HasPrefix(ct, "application/json") || json.Unmarshal([]byte(body), &refusal) != nil ||
					refusal.Reason != c.reason || refusal.Status != c.status {
					t.Errorf("%s %.200s, want the JSON refusal %s with status %d", ct, body, c.reason, c.status)
				}
			case "rpc":
				var answer struct {
					JSONRPC string          `json:"jsonrpc"`
					ID      json.RawMessage `json:"id"`
					Error   *struct {
						Code    int64  `json:"code"`
						Message string `json:"message"`
					} `json:"error"`
				}
				if !strings.HasPrefix(ct, "application/json") || json.Unmarshal([]byte(body), &answer) != nil || answer.JSONRPC != "2.0" ||
					string(answer.ID) != "null" || answer.Error == nil || answer.Error.Code != c.code || answer.Error.Message == "" {
					t.Errorf("%s %.200s, want a JSON-RPC error %d", ct, body, c.code)
				}
				if c.status == http.StatusMethodNotAllowed && resp.Header.Get("Allow") != "POST" {
					t.Errorf("Allow %q, want POST", resp.Header.Get("Allow"))
				}
				if (c.status == http.StatusRequestEntityTooLarge || c.status == http.StatusRequestHeaderFieldsTooLarge) && !strings.Contains(body, `"reason":"payload_too_large"`) {
					t.Errorf("%.200s, want the refusal payload_too_large as data", body)
				}
			case "page":
				if !strings.HasPrefix(ct, "text/html") {
					t.Errorf("%s %.200s, want a page", ct, body)
				}
			}
			if strings.Contains(body, "a/b") || strings.Contains(body, "evil.example") {
				t.Errorf("the answer echoes the Host sent: %.200s", body)
			}
		})
	}
	// HTTP/1.0 needs no Host, and a port or an IPv6 literal is a host.
	for _, raw := range []string{
		"GET /v1/manifest HTTP/1.0\r\n\r\n",
		"GET /v1/manifest HTTP/1.1\r\nHost: 127.0.0.1:8080\r\n\r\n",
		"GET /v1/manifest HTTP/1.1\r\nHost: [::1]:8080\r\n\r\n",
		"GET /v1/manifest HTTP/1.1\r\nHost: forum.example.org\r\n\r\n",
	} {
		if resp, body := f.rawAnswer(raw); resp.StatusCode != http.StatusOK {
			t.Errorf("%q: %d %.200s, want 200", raw, resp.StatusCode, body)
		}
	}
}

// rawAnswer writes raw to the app on a connection of its own and reads one answer.
func (f *forum) rawAnswer(raw string) (*http.Response, string) {
	f.t.Helper()
	conn, err := net.Dial("tcp", strings.TrimPrefix(f.base, "http://"))
	if err != nil {
		f.t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(20 * time.Second)) // a hang fails the test, it does not hold it up
	if _, err := io.WriteString(conn, raw); err != nil {
		f.t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		f.t.Fatalf("no answer to %.80q: %v", raw, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		f.t.Fatalf("the answer to %.80q breaks off: %v", raw, err)
	}
	return resp, string(data)
}
