package web

import (
	"io"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// A server that closes a connection while part of the request is still unread resets it
// (TCP sends RST instead of FIN when unread data is left), and a client that is still
// writing that request gets the reset on its next write, never reading the answer that
// refused it: a 413 for headers over the read buffer or a body over the limit. fasthttp
// closes exactly so. Go's net/http closes such a connection gracefully, and so does Parley:
// the server sends its answer, half-closes (FIN: the client reads the answer, then the end),
// and reads and discards what still comes for a short, bounded while before it closes.

// lingerFor and lingerBytes bound what a closed connection still reads: half a second, as
// net/http waits, and at most 4 MiB.
const (
	lingerFor   = 500 * time.Millisecond
	lingerBytes = 4 << 20
)

// gracefulConn is a TCP connection whose Close half-closes it and leaves the rest to a
// goroutine of its own, so that the server's worker is free at once. Every other method is
// the TCPConn's (SyscallConn too, which clientGone needs).
type gracefulConn struct {
	*net.TCPConn
	closed atomic.Bool
	// release gives the connection's place among the open ones back (listener.go), once it
	// is closed for good.
	release func()
	// pace holds its writes to the slowest rate a reader may take answers at (pacing.go);
	// nil for none.
	pace *pacing

	// The first bytes of the request being read: what the error handler has of a request
	// the server discarded, path and all (headers over the read buffer), to answer it in the
	// terms of its path. answered says the next read begins another request.
	mu       sync.Mutex
	start    []byte
	answered bool
}

// requestStartMax is how much of a request's start is kept: its request line, or enough of
// it to name the path.
const requestStartMax = 256

func (c *gracefulConn) Read(p []byte) (int, error) {
	n, err := c.TCPConn.Read(p)
	if n > 0 {
		c.mu.Lock()
		if c.answered {
			c.start, c.answered = c.start[:0], false
		}
		if room := requestStartMax - len(c.start); room > 0 {
			c.start = append(c.start, p[:min(n, room)]...)
		}
		c.mu.Unlock()
	}
	return n, err
}

func (c *gracefulConn) Write(p []byte) (int, error) {
	c.markAnswered()
	if c.pace == nil {
		return c.TCPConn.Write(p)
	}
	return c.pace.write(c.TCPConn, p)
}

// ReadFrom is the TCPConn's (sendfile for a static file's answer), which answers too.
func (c *gracefulConn) ReadFrom(r io.Reader) (int64, error) {
	c.markAnswered()
	if c.pace == nil {
		return c.TCPConn.ReadFrom(r)
	}
	return c.pace.readFrom(c.TCPConn, r)
}

// SetWriteDeadline is the server's deadline for writes (its write timeout, a stream's own);
// each write is held to it and to the pace of its reader, whichever ends first.
func (c *gracefulConn) SetWriteDeadline(t time.Time) error {
	if c.pace == nil {
		return c.TCPConn.SetWriteDeadline(t)
	}
	return c.pace.setDeadline(c.TCPConn, t)
}

// SetDeadline sets the read deadline and the write deadline as the two setters do.
func (c *gracefulConn) SetDeadline(t time.Time) error {
	if err := c.TCPConn.SetReadDeadline(t); err != nil {
		return err
	}
	return c.SetWriteDeadline(t)
}

func (c *gracefulConn) markAnswered() {
	c.mu.Lock()
	c.answered = true
	c.mu.Unlock()
}

// requestPath is the path on the request line of the request being read, "" when its start
// is no request line. Pipelined requests may share a read; then it is the first one's.
func (c *gracefulConn) requestPath() string {
	c.mu.Lock()
	line := string(c.start)
	c.mu.Unlock()
	line, _, _ = strings.Cut(line, "\n")
	fields := strings.Fields(line)
	if len(fields) < 2 {
		return ""
	}
	target := fields[1]
	if i := strings.Index(target, "://"); i >= 0 { // absolute-form: http://host/path
		rest := target[i+3:]
		if j := strings.IndexByte(rest, '/'); j >= 0 {
			target = rest[j:]
		} else {
			target = "/"
		}
	}
	path, _, _ := strings.Cut(target, "?")
	return path
}

func (c *gracefulConn) Close() error {
	if !c.closed.CompareAndSwap(false, true) {
		return net.ErrClosed
	}
	if err := c.CloseWrite(); err != nil {
		return c.closeNow() // the peer has gone: nothing to wait for
	}
	go c.drain()
	return nil
}

// closeNow closes the socket and gives its place among the open connections back.
func (c *gracefulConn) closeNow() error {
	if c.release != nil {
		defer c.release()
	}
	return c.TCPConn.Close()
}

// drain reads and discards until the client closes its side, lingerBytes have come or
// lingerFor has passed, then closes. When the bytes run out first, it waits the rest of the
// time without reading: the client has had its answer and still has that time to read it.
func (c *gracefulConn) drain() {
	defer c.closeNow()
	until := time.Now().Add(lingerFor)
	if c.SetReadDeadline(until) != nil {
		return
	}
	buf := drainBuffers.Get().(*[]byte)
	defer drainBuffers.Put(buf)
	for read := 0; read < lingerBytes; {
		n, err := c.TCPConn.Read(*buf)
		read += n
		if err != nil {
			return // the client's end, or the time is up
		}
	}
	time.Sleep(time.Until(until))
}

var drainBuffers = sync.Pool{New: func() any { b := make([]byte, 32<<10); return &b }}
