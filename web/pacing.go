package web

import (
	"io"
	"net"
	"sync"
	"time"
)

// § 19: a reader that takes answers slower than min_read_bytes_per_second for 10 s is cut
// off. An answer waiting for a slow reader holds its buffers, and for a stream (an export,
// the feed) the work behind it; a reader that keeps up with the rate holds them no longer
// than the rate allows.
//
// The connection counts how far its reader is behind the rate: each write of n bytes that
// takes t to go out puts the reader t − n/rate further behind (never less than not at all),
// and each write must go out before the reader would be more than the grace behind. Only
// the time spent in writes counts: a stream that has nothing to send for a while (the feed
// between events) costs its reader nothing.

// pacing holds the writes of one connection to the slowest pace allowed.
type pacing struct {
	rate  float64 // bytes per second
	grace time.Duration

	mu sync.Mutex
	// behind is how far the reader is behind the rate now.
	behind time.Duration
	// server is the deadline the server set for writes (its write timeout, a stream's own);
	// current, the pace's deadline for the write under way (zero between writes).
	server, current time.Time
}

// newPacing paces writes to rate bytes a second, with grace; nil (no pacing) for no rate.
func newPacing(rate int, grace time.Duration) *pacing {
	if rate <= 0 {
		return nil
	}
	return &pacing{rate: float64(rate), grace: grace}
}

// allowed is the time n bytes may take at the rate.
func (p *pacing) allowed(n int) time.Duration {
	return time.Duration(float64(n) / p.rate * float64(time.Second))
}

// write writes b to conn within the pace.
func (p *pacing) write(conn *net.TCPConn, b []byte) (int, error) {
	start := time.Now()
	if err := p.begin(conn, start, len(b)); err != nil {
		return 0, err
	}
	n, err := conn.Write(b)
	p.end(time.Since(start), n)
	return n, err
}

// readFromChunk is how much of a file (sendfile) goes out under one deadline.
const readFromChunk = 64 << 10

// readFrom copies r to conn within the pace, a chunk at a time, each with its deadline; the
// connection's ReadFrom still sends a file's chunks without copying them.
func (p *pacing) readFrom(conn *net.TCPConn, r io.Reader) (int64, error) {
	var total int64
	for {
		start := time.Now()
		if err := p.begin(conn, start, readFromChunk); err != nil {
			return total, err
		}
		n, err := conn.ReadFrom(io.LimitReader(r, readFromChunk))
		p.end(time.Since(start), int(n))
		total += n
		if err != nil || n < readFromChunk {
			return total, err
		}
	}
}

// begin sets the deadline of a write of n bytes starting at start: the reader may fall behind
// by at most the grace, and the server's own deadline holds too.
func (p *pacing) begin(conn *net.TCPConn, start time.Time, n int) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.current = start.Add(p.grace - p.behind + p.allowed(n))
	return conn.SetWriteDeadline(earliest(p.server, p.current))
}

// end counts a write of n bytes that took took.
func (p *pacing) end(took time.Duration, n int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.behind = max(0, p.behind+took-p.allowed(n))
	p.current = time.Time{}
}

// setDeadline is the server's deadline for writes; a write under way is held to it at once.
func (p *pacing) setDeadline(conn *net.TCPConn, t time.Time) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.server = t
	return conn.SetWriteDeadline(earliest(t, p.current))
}

// earliest is the earlier of two deadlines, the zero time meaning none.
func earliest(a, b time.Time) time.Time {
	switch {
	case a.IsZero():
		return b
	case b.IsZero() || a.Before(b):
		return a
	}
	return b
}
