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
	if !c.Request().IsBodyStream() {
		return check(len(c.Request().Body()))
	}
	body, err := bodyReader(c, check)
	if err != nil {
		return err
	}
	buf := bodyBuffers.Get().(*bytes.Buffer)
	defer putBodyBuffer(buf)
	chunk := make([]byte, bodyChunk)
	for {
		n, err := body.Read(chunk)
		buf.Write(chunk[:n])
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
	}
	c.Request().SetBody(buf.Bytes()) // a copy, into the request's own buffer
	return nil
}

// bodyReader is the body of c as a stream, for a route that takes it as it parses (an
// import): check is asked about the declared Content-Length at once, and about the bytes
// received as they come. Once they are over it, the stream's error is check's refusal; a
// body that stops coming or breaks off is unreadable's.
func bodyReader(c *fiber.Ctx, check func(n int) error) (io.Reader, error) {
	req := c.Request()
	if !req.IsBodyStream() {
		if err := check(len(req.Body())); err != nil {
			return nil, err
		}
		return bytes.NewReader(req.Body()), nil
	}
	if declared := req.Header.ContentLength(); declared > 0 {
		if err := check(declared); err != nil {
			return nil, err
		}
	}
	return &checkedBody{stream: req.BodyStream(), check: check}, nil
}

// checkedBody counts a body's bytes as they are read and ends it with the size check's
// refusal once they are over.
type checkedBody struct {
	stream io.Reader
	check  func(n int) error
	read   int
	err    error
}

func (b *checkedBody) Read(p []byte) (int, error) {
	if b.err != nil {
		return 0, b.err
	}
	n, err := b.stream.Read(p)
	b.read += n
	switch {
	case n > 0 && b.check(b.read) != nil:
		b.err = b.check(b.read)
		return 0, b.err
	case err != nil && !errors.Is(err, io.EOF):
		b.err = unreadable(err)
		return n, b.err
	}
	return n, err
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
