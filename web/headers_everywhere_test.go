package web_test

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/parleyforum/parley/protocol"
	"github.com/parleyforum/parley/storage"
	"github.com/parleyforum/parley/storage/storagetest"
	"github.com/parleyforum/parley/web"
)

// /metrics is served to a loopback client with no forwarding header of any kind. Found: it
// was served with only X-Real-IP set, or with an empty X-Forwarded-For.
func TestMetricsRefuseEveryForwardingHeader(t *testing.T) {
	f := newObservedForum(t, storagetest.Open(t, storage.SQLite), web.Options{})
	f.must(f.get("/metrics", ""), http.StatusOK)
	for _, h := range []string{"X-Forwarded-For", "Forwarded", "X-Real-IP", "X-Forwarded-Host", "X-Forwarded-Proto", "X-Forwarded-Port",
		"X-Client-IP", "True-Client-IP", "CF-Connecting-IP", "Via"} {
		f.must(f.do(request{method: http.MethodGet, target: "/metrics", header: map[string]string{h: "127.0.0.1"}}), http.StatusNotFound)
	}
	// Empty ones, which Go's client would not send: written by hand.
	for _, h := range []string{"X-Forwarded-For", "X-Real-IP", "Forwarded", "X-Forwarded-Host"} {
		conn, err := net.Dial("tcp", strings.TrimPrefix(f.base, "http://"))
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		if _, err := conn.Write([]byte("GET /metrics HTTP/1.1\r\nHost: x\r\n" + h + ":\r\nConnection: close\r\n\r\n")); err != nil {
			t.Fatal(err)
		}
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusNotFound {
			t.Errorf("GET /metrics with an empty %s: %d, want 404", h, resp.StatusCode)
		}
	}
}

// Every answer says X-Content-Type-Options: nosniff, static files and the plain 404
// included. Found: both lacked it.
func TestNosniffOnEveryAnswer(t *testing.T) {
	f := newForumWith(t, web.Options{DB: storagetest.Open(t, storage.SQLite),
		Static: fstest.MapFS{"css/a.css": {Data: []byte("body{}")}}})
	for _, target := range []string{"/static/css/a.css", "/static/nope.css", "/no/such/page", "/v1/nothing", "/healthz", "/v1/manifest"} {
		r := f.get(target, "")
		if r.header.Get("X-Content-Type-Options") != "nosniff" {
			t.Errorf("GET %s: %d without nosniff", target, r.status)
		}
	}
}

// A request whose framing cannot be read is refused without quoting it. Found: a
// Content-Length of -1 or 1x got a 400 whose message held the whole request buffer, the
// Authorization header included.
func TestMalformedRequestsAreNotEchoed(t *testing.T) {
	f := newForum(t, storagetest.Open(t, storage.SQLite), protocol.Limits{})
	for _, cl := range []string{"-1", "1x", "99999999999999999999999"} {
		for _, path := range []string{"/v1/messages", "/threads/1/messages"} {
			conn, err := net.Dial("tcp", strings.TrimPrefix(f.base, "http://"))
			if err != nil {
				t.Fatal(err)
			}
			req := "POST " + path + " HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + f.alice + "\r\nContent-Length: " + cl + "\r\n\r\n{}"
			if _, err := conn.Write([]byte(req)); err != nil {
				t.Fatal(err)
			}
			conn.(*net.TCPConn).CloseWrite()
			raw, _ := io.ReadAll(conn)
			conn.Close()
			if strings.Contains(string(raw), f.alice) || strings.Contains(string(raw), "Authorization") {
				t.Errorf("Content-Length %s on %s: the answer echoes the request:\n%s", cl, path, raw)
			}
			if !strings.HasPrefix(string(raw), "HTTP/1.1 4") {
				t.Errorf("Content-Length %s on %s: %.100s", cl, path, raw)
			}
		}
	}
}
