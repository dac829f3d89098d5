package web

import (
	"bytes"

	"github.com/gofiber/fiber/v2"

	"github.com/parleyforum/parley/protocol"
)

// refuseAmbiguousFraming refuses a request whose length can be read two ways: two
// Content-Length headers that differ, or Transfer-Encoding beside Content-Length (RFC 9112
// § 6.3). The server reads such a request one way (the last value wins), and a proxy in front
// may read it the other: what one takes for the body the other takes for a second request —
// request smuggling. The answer is 400 and the connection is closed, so that whatever the
// server has not read of it is never read as a request.
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
