package web_test

import (
	"bufio"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/parleyforum/parley/protocol"
	"github.com/parleyforum/parley/storage"
	"github.com/parleyforum/parley/storage/storagetest"
	"github.com/parleyforum/parley/web"
)

// rawForum serves the app with short timeouts, for tests that speak HTTP by hand.
func rawForum(t *testing.T, timeouts web.Timeouts) *forum {
	t.Helper()
	db := storagetest.Open(t, storage.SQLite)
	f := &forum{t: t, db: db, logs: new(syncBuffer)}
	f.app = web.New(web.Options{DB: db, Version: "test", Timeouts: timeouts, Logger: slog.New(slog.NewTextHandler(f.logs, nil))})
	f.base = serve(t, f.app)
	f.alice = f.token("ainotes:alice", false, "read,write", nil)
	return f
}

// rawExchange writes raw to the app on a connection of its own and reads one answer. closed
// reports whether the server closed the connection after it.
func (f *forum) rawExchange(raw string) (resp *http.Response, body string, closed bool) {
	f.t.Helper()
	conn, err := net.Dial("tcp", strings.TrimPrefix(f.base, "http://"))
	if err != nil {
		f.t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(20 * time.Second)) // a hang fails the test, it does not hold it up
	if _, err := io.WriteString(conn, raw); err != nil {
		f.t.Fatal(err)
	}
	br := bufio.NewReader(conn)
	resp, err = http.ReadResponse(br, nil)
	if err != nil {
		f.t.Fatalf("no answer to %.80q: %v", raw, err)
	}
	data, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	conn.SetReadDeadline(time.Now().Add(time.Second))
	_, err = br.ReadByte()
	return resp, string(data), err == io.EOF || (err != nil && !isTimeout(err))
}

func isTimeout(err error) bool {
	ne, ok := err.(net.Error)
	return ok && ne.Timeout()
}

// Every answer under /v1 is the JSON refusal of § 9, also for what the server refuses while
// it reads the request, before any route runs: headers too large, a request not received in
// time, a broken multipart body.
func TestEarlyRefusalsUnderV1AreJSON(t *testing.T) {
	f := rawForum(t, web.Timeouts{Read: 300 * time.Millisecond})
	multipart := "--xyz\r\nbroken"
	for _, c := range []struct {
		name, raw string
		status    int
		reason    string
	}{
		{"headers over the read buffer", "GET /v1/manifest HTTP/1.1\r\nHost: x\r\nX-Big: " + strings.Repeat("a", 9000) + "\r\n\r\n",
			http.StatusRequestEntityTooLarge, "payload_too_large"},
		{"a body that never comes", "POST /v1/messages HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{",
			http.StatusRequestTimeout, "invalid_body"},
		{"headers that never end", "GET /v1/manifest HTTP/1.1\r\nHost: x\r\n",
			http.StatusRequestTimeout, "invalid_body"},
		{"a broken multipart body", "POST /v1/messages HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + f.alice +
			"\r\nContent-Type: multipart/form-data; boundary=xyz\r\nContent-Length: " + strconv.Itoa(len(multipart)) + "\r\n\r\n" + multipart,
			http.StatusBadRequest, "invalid_body"},
	} {
		t.Run(c.name, func(t *testing.T) {
			resp, body, _ := f.rawExchange(c.raw)
			if resp.StatusCode != c.status || !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") ||
				!strings.Contains(body, `"reason":"`+c.reason+`"`) {
				t.Errorf("%d %s %.200s, want %d %s in JSON", resp.StatusCode, resp.Header.Get("Content-Type"), body, c.status, c.reason)
			}
		})
	}
}

// A request whose length can be read two ways is refused with 400 and its connection closed,
// so that nothing after it on the connection is read as a request (request smuggling). One
// length sent twice alike is refused too: RFC 9110 § 8.6 lets a server refuse it or read it
// as one, and the HTTP server under Parley refuses it, as nginx does.
func TestAmbiguousFramingIsRefusedAndTheConnectionClosed(t *testing.T) {
	f := rawForum(t, web.Timeouts{})
	envelope := `{"kind":"ask","body":"hi"}`
	head := "POST /v1/messages HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + f.alice + "\r\nContent-Type: application/json\r\n"
	smuggled := "GET /v1/threads HTTP/1.1\r\nHost: x\r\n\r\n"
	n := strconv.Itoa(len(envelope))
	for _, c := range []struct{ name, raw string }{
		{"two different lengths", head + "Content-Length: " + n + "\r\nContent-Length: " + strconv.Itoa(len(envelope)+len(smuggled)) + "\r\n\r\n" + envelope + smuggled},
		{"chunked and a length", head + "Transfer-Encoding: chunked\r\nContent-Length: " + n + "\r\n\r\n" +
			strconv.FormatInt(int64(len(envelope)), 16) + "\r\n" + envelope + "\r\n0\r\n\r\n" + smuggled},
		{"a length and chunked", head + "Content-Length: " + n + "\r\nTransfer-Encoding: chunked\r\n\r\n" + envelope + smuggled},
		{"the same length twice", head + "Content-Length: " + n + "\r\nContent-Length: " + n + "\r\n\r\n" + envelope + smuggled},
	} {
		t.Run(c.name, func(t *testing.T) {
			resp, body, closed := f.rawExchange(c.raw)
			if resp.StatusCode != http.StatusBadRequest || !strings.Contains(body, `"reason":"invalid_body"`) || !closed {
				t.Errorf("%d closed=%v %.200s, want 400 invalid_body and the connection closed", resp.StatusCode, closed, body)
			}
		})
	}
	if list := f.must(f.get("/v1/threads", f.alice), http.StatusOK); strings.Contains(string(list.body), `"th_`) {
		t.Errorf("a refused request was acted on: %s", list.body)
	}
}

// An answer that its client does not read is given up after the write timeout: a client
// that pipelines requests and never reads the answers loses its connection instead of
// holding its answers in the server's memory for ever.
func TestUnreadAnswersAreGivenUp(t *testing.T) {
	f := rawForum(t, web.Timeouts{Write: 200 * time.Millisecond})
	conn, err := net.Dial("tcp", strings.TrimPrefix(f.base, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	// Each manifest answer has about 12 kB: 400 of them are far more than the sockets hold.
	const requests = 400
	go func() {
		req := "GET /v1/manifest HTTP/1.1\r\nHost: x\r\n\r\n"
		for range requests {
			if _, err := io.WriteString(conn, req); err != nil {
				return
			}
		}
	}()
	// The server lets go of the connection (what its kernel still holds to send is no
	// longer the server's); without a write timeout it would wait for ever.
	for start := time.Now(); f.app.Server().GetOpenConnectionsCount() > 0; time.Sleep(50 * time.Millisecond) {
		if time.Since(start) > 15*time.Second {
			t.Fatal("the server still holds a connection whose client reads nothing")
		}
	}
}

// A long poll whose client has gone stops waiting as soon as the server can tell, over HTTP
// and over MCP: its place among the waits of its identity is free again long before its
// wait_seconds have passed.
func TestAbandonedLongPollStops(t *testing.T) {
	limits := protocol.DefaultLimits()
	limits.InboxWaitsPerIdentity = 1
	mcpWait := toolCall("inbox", `{"wait_seconds":30}`)
	for _, c := range []struct{ name, request string }{
		{"HTTP", "GET /v1/inbox?wait_seconds=30 HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\n\r\n"},
		{"MCP", "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer %s" +
			"\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: " +
			strconv.Itoa(len(mcpWait)) + "\r\n\r\n" + mcpWait},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := newForum(t, storagetest.Open(t, storage.SQLite), limits)
			conn, err := net.Dial("tcp", strings.TrimPrefix(f.base, "http://"))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := fmt.Fprintf(conn, c.request, f.alice); err != nil {
				t.Fatal(err)
			}
			for start := time.Now(); f.db.Changes().Waiting() == 0; time.Sleep(20 * time.Millisecond) {
				if time.Since(start) > 10*time.Second {
					t.Fatal("the long poll never began")
				}
			}
			conn.Close() // the client goes away
			// Its place is free again: another long poll of the same identity is let in.
			for start := time.Now(); f.get("/v1/inbox?wait_seconds=1", f.alice).reason() == "rate_limited"; time.Sleep(100 * time.Millisecond) {
				if time.Since(start) > 10*time.Second {
					t.Fatal("the long poll of a client that has gone still waits")
				}
			}
		})
	}
}
