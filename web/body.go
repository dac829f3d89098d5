package web

import (
	"bytes"
	"errors"
	"io"
	"net"
	"sync"

	"github.com/gofiber/fiber/v2"

	"github.com/parleyforum/parley/protocol"
)

// § 19: bytes held follow bytes received. The server hands every handler its request's body
// as a stream (StreamRequestBody), never a buffer reserved from the declared Content-Length;
// a handler that takes a body reads it here, as it arrives, bounded by its route's limit. A
// client that declares a megabyte and sends a byte makes the server hold a byte, and one that
// sends more than the route takes is refused as soon as it has.

// readBody reads the body of c as it arrives and keeps it as the request's body, for
// c.Request().Body() and the form values. check is the route's size check, the first of § 9:
// it is asked about the declared Content-Length before anything is read, and about the bytes
// received as they come; its refusal ends the reading. A body that cannot be read (it stops
// coming within the server's read timeout, or its chunks are broken) is invalid_body, 408 for
// the timeout; the server closes such a connection.
func readBody(c *fiber.Ctx, check func(n int) error) error {
	req := c.Request()
	if !req.IsBodyStream() {
		return check(len(req.Body()))
	}
	if declared := req.Header.ContentLength(); declared > 0 {
		if err := check(declared); err != nil {
			return err
		}
	}
	buf := bodyBuffers.Get().(*bytes.Buffer)
	defer putBodyBuffer(buf)
	chunk := make([]byte, bodyChunk)
	stream := req.BodyStream()
	for {
		n, err := stream.Read(chunk)
		buf.Write(chunk[:n])
		if n > 0 {
			if refusal := check(buf.Len()); refusal != nil {
				return refusal
			}
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return unreadable(err)
		}
	}
	req.SetBody(buf.Bytes()) // a copy, into the request's own buffer
	return nil
}

// bodyChunk is how much of a body one read takes: what a body may hold beyond its limit
// before it is refused.
const bodyChunk = 8 << 10

// unreadable is the refusal of a body that stopped arriving or broke off.
func unreadable(err error) *protocol.Error {
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		e := protocol.Refuse(protocol.ReasonInvalidBody, "the request's body was not received within the server's read timeout")
		e.Status = fiber.StatusRequestTimeout
		return e
	}
	return protocol.Refuse(protocol.ReasonInvalidBody, "the request's body could not be read: it ended early or its chunks are malformed")
}

// bodyBuffers keeps readBody's buffers from one request to the next.
var bodyBuffers = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// putBodyBuffer returns a buffer to bodyBuffers, unless a large body grew it: an artifact's
// megabyte must not stay in the pool.
func putBodyBuffer(buf *bytes.Buffer) {
	if buf.Cap() > 64<<10 {
		return
	}
	buf.Reset()
	bodyBuffers.Put(buf)
}
