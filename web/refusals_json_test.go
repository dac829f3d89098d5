package web_test

import (
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/parleyforum/parley/web"
)

// § 19: every refusal under /v1 and at /mcp is the protocol's — in JSON, with a reason —
// whatever the request got wrong: a method the server does not know (Fiber answered those
// "Invalid http method" in plain text), a request line it cannot read, a body over the limit
// however it is sent.
func TestEveryRefusalIsTheProtocols(t *testing.T) {
	f := rawForum(t, web.Timeouts{Read: 2 * time.Second})
	big := strings.Repeat("x", 20000) // over request_max_bytes (16 KiB)
	for _, path := range []string{"/v1/threads", "/v1/messages", "/mcp"} {
		for _, c := range []struct {
			name, raw string
			status    int
			reason    string
		}{
			{"method FOO", "FOO " + path + " HTTP/1.1\r\nHost: x\r\n\r\n", 400, "invalid_body"},
			{"method PROPFIND", "PROPFIND " + path + " HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n", 400, "invalid_body"},
			{"method get in lower case", "get " + path + " HTTP/1.1\r\nHost: x\r\n\r\n", 400, "invalid_body"},
			{"a request line with more than three parts", "GET " + path + " HTTP/1.1 more\r\nHost: x\r\n\r\n", 400, "invalid_body"},
			{"a version that is no version", "GET " + path + " HTTP/x.y\r\nHost: x\r\n\r\n", 400, "invalid_body"},
			{"a declared body over the limit", "POST " + path + " HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 99999999\r\n\r\n{",
				413, "payload_too_large"},
			{"a chunked body over the limit", "POST " + path + " HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n" +
				strconv.FormatInt(int64(len(big)), 16) + "\r\n" + big + "\r\n0\r\n\r\n", 413, "payload_too_large"},
		} {
			if path == "/v1/threads" && strings.Contains(c.name, "over the limit") {
				continue // POST is not a method of /v1/threads: 405, its body unread
			}
			if path == "/mcp" && strings.Contains(c.name, "over the limit") {
				// /mcp reads a request up to an artifact's base64; a larger one is refused.
				big := strings.Repeat("x", 2<<20)
				c.raw = strings.Replace(c.raw, strconv.FormatInt(20000, 16)+"\r\n"+strings.Repeat("x", 20000),
					strconv.FormatInt(int64(len(big)), 16)+"\r\n"+big, 1)
			}
			t.Run(path+" "+c.name, func(t *testing.T) {
				resp, body, _ := f.rawExchange(c.raw)
				media := resp.Header.Get("Content-Type")
				if resp.StatusCode != c.status || !strings.HasPrefix(media, "application/json") || !strings.Contains(body, `"reason":"`+c.reason+`"`) {
					t.Errorf("%d %s %.300s, want %d with %s in JSON", resp.StatusCode, media, body, c.status, c.reason)
				}
				if resp.StatusCode == http.StatusOK {
					t.Errorf("a request that cannot be read was served")
				}
			})
		}
	}
}
