package web_test

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/parleyforum/parley/web"
)

// A request refused while the server reads it — headers over the read buffer, a body over
// the largest the server reads — is answered with its refusal, and a client that sends its
// whole request before it reads gets to read it: the server stops reading, sends the answer,
// half-closes the connection and takes what still comes for a short while before it closes,
// as Go's net/http does. Found: the server closed with the rest of the request unread, which
// resets the connection; the client's next write failed, and it never read the 413.
func TestRefusedRequestsAreReadBeforeTheReset(t *testing.T) {
	f := rawForum(t, web.Timeouts{})
	addr := strings.TrimPrefix(f.base, "http://")
	const rounds = 50
	for _, c := range []struct {
		name, head string
	}{
		{"headers over the read buffer", "GET /v1/manifest HTTP/1.1\r\nHost: x\r\nX-Big: "},
		{"a body over the largest read", "POST /v1/messages HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100000000\r\n\r\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			failed := 0
			for round := range rounds {
				if err := refusalAfterSending(addr, c.head); err != nil {
					failed++
					t.Logf("round %d: %v", round, err)
				}
			}
			if failed > 0 {
				t.Errorf("%d of %d clients did not read the 413 that refused them", failed, rounds)
			}
		})
	}
}

// refusalAfterSending sends head and then 1 MiB more on one connection, as a client does
// that writes its whole request before it reads, and then reads the answer, which must be
// the whole JSON refusal payload_too_large. The client's send buffer is small, so that the
// request cannot wait in it while the server does not read.
func refusalAfterSending(addr, head string) error {
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		return err
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(20 * time.Second))
	_ = conn.(*net.TCPConn).SetWriteBuffer(16 << 10)
	if _, err := io.WriteString(conn, head); err != nil {
		return err
	}
	chunk := []byte(strings.Repeat("a", 64<<10))
	for range 16 {
		if _, err := conn.Write(chunk); err != nil {
			return err
		}
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		return err
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusRequestEntityTooLarge || !strings.Contains(string(body), `"reason":"payload_too_large"`) {
		return &unexpected{resp.StatusCode, string(body)}
	}
	return nil
}

type unexpected struct {
	status int
	body   string
}

func (u *unexpected) Error() string { return http.StatusText(u.status) + ": " + u.body }
