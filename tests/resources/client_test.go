//go:build resources

package resources

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"
)

// The matrix's client speaks HTTP/1.1 over a connection of its own for every request, from a
// loopback address of its own (127.2.x.y: Linux routes all of 127/8 to the loopback), so
// that ten callers are ten clients to the server, as ten agents on ten machines would be,
// and a request's connection lives exactly as long as its exchange. It writes and reads the
// bytes itself, to write and read them as slowly as a case needs.

// request is one request of a row, for one caller.
type request struct {
	method, target string
	contentType    string
	body           []byte
	// declared: a body of this many bytes is declared in Content-Length and none of it is
	// sent — the request waits for its answer with its body unsent.
	declared int64
	// stream: the answer is a stream that lasts; its status and headers are its answer.
	stream bool
}

// answer is what one exchange came to.
type answer struct {
	status int // HTTP's, or over MCP the refusal's (200 for a result)
	// first is the time from the request's first byte to the answer's; held the time until
	// the server was done with the connection: the answer read to its end, or the server
	// closed or cut it.
	first, held time.Duration
	bytes       int64  // of the answer's body
	head        []byte // its first bytes, for messages
	err         error  // the exchange broke off: no answer, or an answer cut short
	// letGo: the server closed its side before the slow reader had read the answer (it sent
	// the rest to the system's buffers and closed, or cut the reader off); closed: the server
	// closed the connection without an answer.
	letGo, closed bool
}

func (a answer) String() string {
	if a.err != nil {
		return fmt.Sprintf("%d after %.1f s: %v", a.status, a.held.Seconds(), a.err)
	}
	return fmt.Sprintf("%d after %.1f s", a.status, a.held.Seconds())
}

// addresses hands out the callers' loopback addresses.
var addresses atomic.Int64

func nextAddress() net.IP {
	n := addresses.Add(1)
	return net.IPv4(127, 2, byte(n/250), byte(n%250+1)).To4()
}

// mode is how a caller reads and writes.
type mode int

const (
	readsAtOnce mode = iota
	// slowReader reads the answer a slowReadChunk each slowReadEvery; its hold is the
	// server's: until the server closed its side of the connection (/proc/net/tcp), not until
	// the client read it all.
	slowReader
	// slowWriter sends its headers, then its body a byte each slowWriteEvery.
	slowWriter
)

const (
	slowReadChunk  = 1024
	slowReadEvery  = 250 * time.Millisecond // 4 KiB/s, a quarter of min_read_bytes_per_second
	slowWriteEvery = time.Second            // a byte a second
	// slowReceiveBuffer is the slow reader's socket buffer, so that the system does not
	// take megabytes of the answer off the server on the reader's behalf.
	slowReceiveBuffer = 4096
)

// exchange sends r to the server as c, from a fresh address, and reads the answer as m says,
// giving up after limit.
func (s *server) exchange(c caller, r request, m mode, limit time.Duration) answer {
	return s.exchangeUntil(context.Background(), c, r, m, limit)
}

// exchangeUntil is exchange, broken off (its connection closed) when ctx ends.
func (s *server) exchangeUntil(ctx context.Context, c caller, r request, m mode, limit time.Duration) answer {
	dialer := net.Dialer{LocalAddr: &net.TCPAddr{IP: nextAddress()}, Timeout: 10 * time.Second}
	if m == slowReader {
		dialer.Control = func(_, _ string, raw syscall.RawConn) error {
			var err error
			if cerr := raw.Control(func(fd uintptr) {
				err = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, slowReceiveBuffer)
			}); cerr != nil {
				return cerr
			}
			return err
		}
	}
	host := strings.TrimPrefix(s.base, "http://")
	start := time.Now()
	conn, err := dialer.Dial("tcp", host)
	if err != nil {
		return answer{held: time.Since(start), err: fmt.Errorf("connecting: %w", err)}
	}
	defer conn.Close()
	_ = conn.SetDeadline(start.Add(limit))
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	defer stop()

	head, body := r.wire(host, c)
	var a answer
	switch m {
	case slowWriter:
		return s.writeSlowly(conn, start, limit, head, body, r)
	default:
		if _, err := conn.Write(append(head, body...)); err != nil && r.declared == 0 {
			return answer{held: time.Since(start), err: fmt.Errorf("sending: %w", err)}
		}
	}
	first := &firstByte{r: conn}
	resp, err := http.ReadResponse(bufio.NewReader(first), nil)
	if err != nil {
		return answer{held: time.Since(start), err: noAnswer(err, limit)}
	}
	// Not resp.Body.Close: it would read a stream to its end. The connection's close ends it.
	a.status, a.first = resp.StatusCode, first.at.Sub(start)
	switch {
	case r.stream && resp.StatusCode == http.StatusOK:
		a.held = time.Since(start)
		return a
	case m == slowReader:
		return s.readSlowly(conn, resp, a, start, limit)
	}
	keep := 2048
	if strings.HasPrefix(r.target, "/mcp") {
		keep = 16 << 20 // the whole JSON-RPC answer, for the tool's own status
	}
	var kept bytes.Buffer
	a.bytes, err = io.Copy(&limitedBuffer{b: &kept, n: keep}, resp.Body)
	a.held, a.head = time.Since(start), kept.Bytes()
	if err != nil {
		a.err = noAnswer(err, limit)
	}
	if strings.HasPrefix(r.target, "/mcp") && a.status == http.StatusOK {
		a.status = toolStatus(kept.Bytes())
	}
	return a
}

// wire is the request as bytes: its head, and its body (nothing when only declared).
func (r request) wire(host string, c caller) (head, body []byte) {
	var b bytes.Buffer
	fmt.Fprintf(&b, "%s %s HTTP/1.1\r\nHost: %s\r\nConnection: close\r\nUser-Agent: parley-resource-matrix\r\n", r.method, r.target, host)
	if c.authorization != "" {
		fmt.Fprintf(&b, "Authorization: %s\r\n", c.authorization)
	}
	if c.cookie != "" {
		fmt.Fprintf(&b, "Cookie: %s\r\n", c.cookie)
	}
	if strings.HasPrefix(r.target, "/mcp") {
		b.WriteString("Accept: application/json, text/event-stream\r\n")
	}
	if r.contentType != "" {
		fmt.Fprintf(&b, "Content-Type: %s\r\n", r.contentType)
	}
	length := int64(len(r.body))
	if r.declared > 0 {
		length = r.declared
	}
	if length > 0 || r.method == http.MethodPost || r.method == http.MethodPut || r.method == http.MethodPatch {
		fmt.Fprintf(&b, "Content-Length: %d\r\n", length)
	}
	b.WriteString("\r\n")
	if r.declared > 0 {
		return b.Bytes(), nil
	}
	return b.Bytes(), r.body
}

// writeSlowly sends head at once, then the body (or, for a request that only declares one,
// that many bytes) a byte each slowWriteEvery, until the server answers or closes. A request
// without a body sends its headers but the blank line that ends them, then one more header
// a byte at a time.
func (s *server) writeSlowly(conn net.Conn, start time.Time, limit time.Duration, head, body []byte, r request) answer {
	if len(body) == 0 && r.declared == 0 {
		head = head[:len(head)-2]
		body = []byte("X-Padding: " + strings.Repeat("p", 4096) + "\r\n\r\n")
	}
	if _, err := conn.Write(head); err != nil {
		return answer{held: time.Since(start), err: fmt.Errorf("sending the head: %w", err)}
	}
	if r.declared > 0 {
		body = bytes.Repeat([]byte{' '}, int(min(r.declared, 1<<20)))
	}
	got := make(chan answer, 1)
	go func() {
		first := &firstByte{r: conn}
		resp, err := http.ReadResponse(bufio.NewReader(first), nil)
		if err != nil {
			got <- answer{held: time.Since(start), err: noAnswer(err, limit)}
			return
		}
		var n int64
		if !r.stream {
			n, _ = io.Copy(io.Discard, resp.Body)
		}
		got <- answer{status: resp.StatusCode, first: first.at.Sub(start), held: time.Since(start), bytes: n}
	}()
	tick := time.NewTicker(slowWriteEvery)
	defer tick.Stop()
	for i := 0; ; i++ {
		if i < len(body) {
			if _, err := conn.Write(body[i : i+1]); err != nil {
				// The server closed its side: what it answered, if anything, is read above.
				return <-got
			}
		}
		select {
		case a := <-got:
			return a
		case <-tick.C:
		}
	}
}

// readSlowly reads resp's body slowReadChunk at a time, each slowReadEvery, until it ends or
// the server lets the connection go; held is when the server's side closed.
func (s *server) readSlowly(conn net.Conn, resp *http.Response, a answer, start time.Time, limit time.Duration) answer {
	serverSide := tcpKey(conn.RemoteAddr(), conn.LocalAddr())
	buf := make([]byte, slowReadChunk)
	tick := time.NewTicker(slowReadEvery)
	defer tick.Stop()
	for {
		n, err := io.ReadFull(resp.Body, buf)
		if a.bytes == 0 {
			a.head = append([]byte(nil), buf[:n]...)
		}
		a.bytes += int64(n)
		if err != nil {
			if !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
				a.err = noAnswer(err, limit)
			}
			a.held = time.Since(start)
			return a
		}
		if !established(serverSide) {
			a.held, a.letGo = time.Since(start), true
			return a
		}
		if time.Since(start) > limit {
			a.held, a.err = time.Since(start), fmt.Errorf("the server still sent after %v", limit)
			return a
		}
		<-tick.C
	}
}

func noAnswer(err error, limit time.Duration) error {
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return fmt.Errorf("no end within %v", limit)
	}
	return err
}

// tcpKey is a TCP connection's local and remote address as /proc/net/tcp writes them.
func tcpKey(local, remote net.Addr) string {
	hex := func(a net.Addr) string {
		ta := a.(*net.TCPAddr)
		ip := ta.IP.To4()
		return fmt.Sprintf("%02X%02X%02X%02X:%04X", ip[3], ip[2], ip[1], ip[0], ta.Port)
	}
	return hex(local) + " " + hex(remote)
}

// established reports whether the connection keyed so is open on its side (ESTABLISHED):
// for the server's side, that the server has not closed it yet.
func established(key string) bool {
	raw, err := os.ReadFile("/proc/net/tcp")
	if err != nil {
		return true
	}
	for _, line := range strings.Split(string(raw), "\n")[1:] {
		fields := strings.Fields(line)
		if len(fields) > 3 && fields[1]+" "+fields[2] == key {
			return fields[3] == "01"
		}
	}
	return false
}

// firstByte notes when the first byte of the answer arrived.
type firstByte struct {
	r  io.Reader
	at time.Time
}

func (f *firstByte) Read(p []byte) (int, error) {
	n, err := f.r.Read(p)
	if n > 0 && f.at.IsZero() {
		f.at = time.Now()
	}
	return n, err
}

// limitedBuffer keeps the first n bytes written to it and counts the rest.
type limitedBuffer struct {
	b *bytes.Buffer
	n int
}

func (l *limitedBuffer) Write(p []byte) (int, error) {
	if room := l.n - l.b.Len(); room > 0 {
		l.b.Write(p[:min(room, len(p))])
	}
	return len(p), nil
}

// toolStatus is a tools/call answer's status: 200 for a result, a refusal's own status, 400
// for a JSON-RPC error, 0 for no JSON-RPC answer.
func toolStatus(raw []byte) int {
	var rpc struct {
		Result *struct {
			IsError           bool `json:"isError"`
			StructuredContent struct {
				Status int `json:"status"`
			} `json:"structuredContent"`
		} `json:"result"`
		Error *struct {
			Code int `json:"code"`
		} `json:"error"`
	}
	if err := json.Unmarshal(raw, &rpc); err != nil {
		return 0
	}
	switch {
	case rpc.Error != nil:
		return http.StatusBadRequest
	case rpc.Result == nil:
		return 0
	case rpc.Result.IsError:
		return rpc.Result.StructuredContent.Status
	}
	return http.StatusOK
}

// toolCall is the body of a tools/call of tool with args.
func toolCall(tool string, args map[string]any) []byte {
	raw, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tools/call",
		"params": map[string]any{"name": tool, "arguments": args}})
	return raw
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
