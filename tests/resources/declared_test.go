//go:build resources

package resources

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/parleyforum/parley/protocol"
)

// Issue 35's first defect: fasthttp reserved a body buffer as large as the declared
// Content-Length before any handler or token check ran, so that 2,000 sockets that each sent
// headers declaring 1 MiB and one byte (300 KB sent in all) took the server past 2 GB. Here
// an unauthenticated client does that on the routes that take the largest bodies, from
// declaredAddresses addresses (as one client with many addresses, an IPv6 prefix, has them),
// and the server may grow by declaredMB at most, whatever it declared.

const (
	declaredSockets   = 2000 // the phase's name says so too
	declaredAddresses = 32
	declaredHold      = 2 * time.Second
)

// declaredRoutes are the routes that take the largest bodies, and one that takes none.
var declaredRoutes = []struct {
	method, target string
	declared       int64
}{
	{http.MethodGet, "/healthz", 1 << 20},
	{http.MethodPost, "/v1/messages", 1 << 20},
	{http.MethodPut, "/v1/artifacts", int64(protocol.DefaultLimits().ArtifactMaxBytes)},
	{http.MethodPost, "/mcp", 1 << 20},
	{http.MethodPost, "/v1/imports", importMaxBytes},
}

// runDeclaredBodies sends the sockets, spread over declaredRoutes, and holds the server to
// declaredMB.
func (m *matrix) runDeclaredBodies() {
	m.s.restart()
	var answers map[string]int
	g := m.s.measure(func() { answers = m.s.declareBodies() })
	var routes []string
	for _, d := range declaredRoutes {
		routes = append(routes, fmt.Sprintf("%s %s (%d bytes)", d.method, d.target, d.declared))
	}
	m.phase("2,000 sockets without a token, each declaring its route's largest body", g, declaredMB,
		fmt.Sprintf("from %d addresses to %s; after %v: %s", declaredAddresses, strings.Join(routes, ", "), declaredHold, summary(answers)))
}

// declareBodies opens declaredSockets connections that each send a request's headers with a
// Content-Length of its route's largest body and one byte of the body, holds them
// declaredHold, and returns what they had got by then: an answer's status, closed by the
// server (or refused), or nothing yet.
func (s *server) declareBodies() map[string]int {
	host := strings.TrimPrefix(s.base, "http://")
	var heads []string
	for _, d := range declaredRoutes {
		heads = append(heads, fmt.Sprintf("%s %s HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n{",
			d.method, d.target, host, d.declared))
	}
	var mu sync.Mutex
	counts := map[string]int{}
	var conns []net.Conn
	var wg sync.WaitGroup
	for range declaredAddresses {
		wg.Go(func() {
			dialer := net.Dialer{LocalAddr: &net.TCPAddr{IP: nextAddress()}, Timeout: 5 * time.Second}
			for i := range declaredSockets / declaredAddresses {
				conn, err := dialer.Dial("tcp", host)
				if err == nil {
					_, err = io.WriteString(conn, heads[i%len(heads)])
				}
				mu.Lock()
				if err != nil {
					counts["closed"]++
				} else {
					conns = append(conns, conn)
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	time.Sleep(declaredHold)
	for _, conn := range conns {
		_ = conn.SetReadDeadline(time.Now().Add(time.Millisecond))
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		var ne net.Error
		switch {
		case err == nil:
			counts[fmt.Sprint(resp.StatusCode)]++
		case errors.As(err, &ne) && ne.Timeout():
			counts["waiting"]++
		default:
			counts["closed"]++
		}
		conn.Close()
	}
	return counts
}
