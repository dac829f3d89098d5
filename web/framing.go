package web

import (
	"bytes"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/parleyforum/parley/protocol"
)

// refuseAmbiguousFraming refuses a request whose length can be read two ways: two
// Content-Length headers that differ, or Transfer-Encoding beside Content-Length (RFC 9112
// § 6.3). A server that reads such a request one way, and a proxy in front that reads it the
// other, disagree on where it ends: what one takes for the body the other takes for a second
// request — request smuggling. The HTTP server refuses two Content-Length headers itself, even
// alike, while it reads the request (RFC 9110 § 8.6 allows that; errorHandler answers it);
// this check stands whatever the server below lets through. The answer is 400 and the
// connection is closed, so that whatever the server has not read of it is never read as a
// request.
func refuseAmbiguousFraming(c *fiber.Ctx) error {
	if !ambiguousFraming(c.Request().Header.RawHeaders()) {
		return c.Next()
	}
	c.Context().SetConnectionClose()
	const why = "the request's length is ambiguous: more than one Content-Length, or Transfer-Encoding with Content-Length"
	if isAPIPath(c.Path()) {
		return writeRefusal(c, protocol.Refuse(protocol.ReasonInvalidBody, why))
	}
	return fiber.NewError(fiber.StatusBadRequest, why)
}

// ambiguousFraming reads the raw header lines of a request as they came.
func ambiguousFraming(raw []byte) bool {
	var lengths [][]byte
	transferEncoding := false
	for line := range bytes.SplitSeq(raw, []byte("\n")) {
		name, value, ok := bytes.Cut(line, []byte(":"))
		if !ok {
			continue
		}
		name = bytes.TrimSpace(name)
		switch {
		case bytes.EqualFold(name, []byte(fiber.HeaderContentLength)):
			lengths = append(lengths, bytes.TrimSpace(value))
		case bytes.EqualFold(name, []byte(fiber.HeaderTransferEncoding)):
			transferEncoding = true
		}
	}
	if transferEncoding && len(lengths) > 0 {
		return true
	}
	for _, l := range lengths[min(1, len(lengths)):] {
		if !bytes.Equal(l, lengths[0]) {
			return true
		}
	}
	return false
}

// refuseInvalidHost refuses a request whose Host header is not one host (RFC 9112 § 3.2): an
// HTTP/1.1 request without it, with more than one, or with one that is no host and port
// (a '/', a space ...). The HTTP server refuses some of these itself while it reads the
// request (errorHandler answers them); this is the rule for all of them, whatever the server
// below lets through. Such a Host once moved the request: fasthttp joined it and the target
// into one URL, so that "Host: a/b" moved "/v1/manifest" to "/b/v1/manifest", which reached
// no route and was not answered in the terms of the path asked for. The answer is 400 in
// those terms (JSON under /v1, JSON-RPC under /mcp, a page elsewhere), taken from the
// request line, and the connection is closed.
func refuseInvalidHost(c *fiber.Ctx) error {
	switch n, host := hostLines(c.Request().Header.RawHeaders()); {
	case n == 1 && validHost(host), n == 0 && !c.Request().Header.IsHTTP11():
		return c.Next()
	}
	c.Context().SetConnectionClose()
	c.Path(targetPath(c.Request().Header.RequestURI()))
	return fiber.NewError(fiber.StatusBadRequest, "the request must carry one Host header naming a host and optional port")
}

// hostLines counts the Host header lines of a request as they came, and gives the value of
// the first. It is not the Host fasthttp keeps: for a target in absolute form
// ("GET http://h/x") that is the target's authority, as RFC 9112 § 3.2.2 has a server use it
// — but a Host line that is no host is still refused (§ 3.2).
func hostLines(raw []byte) (n int, first []byte) {
	for line := range bytes.SplitSeq(raw, []byte("\n")) {
		if name, value, ok := bytes.Cut(line, []byte(":")); ok && bytes.EqualFold(bytes.TrimSpace(name), []byte(fiber.HeaderHost)) {
			if n == 0 {
				first = bytes.TrimSpace(value)
			}
			n++
		}
	}
	return n, first
}

// validHost reports whether a Host value holds only what a host (a name, an IPv4 address or
// an IPv6 literal in brackets) and a port may, as net/http checks it: the unreserved and
// sub-delims characters of RFC 3986, '%', ':', '[' and ']'. It may be empty (a target with
// no authority).
func validHost(h []byte) bool {
	for _, b := range h {
		if !hostByte(b) {
			return false
		}
	}
	return true
}

func hostByte(b byte) bool {
	switch {
	case 'a' <= b && b <= 'z', 'A' <= b && b <= 'Z', '0' <= b && b <= '9':
		return true
	}
	return bytes.IndexByte([]byte("-._~!$&'()*+,;=%:[]"), b) >= 0
}

// targetPath is the path of a request target as the request line gives it: origin form
// ("/v1/x?q"), absolute form ("http://host/v1/x") or "*".
func targetPath(uri []byte) string {
	s := string(uri)
	if !strings.HasPrefix(s, "/") {
		if _, rest, ok := strings.Cut(s, "://"); ok {
			s = "/"
			if i := strings.IndexByte(rest, '/'); i >= 0 {
				s = rest[i:]
			}
		}
	}
	s, _, _ = strings.Cut(s, "?")
	return s
}
