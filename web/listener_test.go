package web_test

import (
	"bufio"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/parleyforum/parley/protocol"
	"github.com/parleyforum/parley/storage"
	"github.com/parleyforum/parley/storage/storagetest"
	"github.com/parleyforum/parley/web"
)

// dialFrom opens a connection to the app at base from the loopback address from.
func dialFrom(t *testing.T, base, from string) net.Conn {
	t.Helper()
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(from)}}
	conn, err := d.Dial("tcp", strings.TrimPrefix(base, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

// answered reports whether a request on conn is answered; a connection the server closed
// is not. A server that neither answers nor closes fails the test.
func answered(t *testing.T, conn net.Conn) bool {
	t.Helper()
	conn.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.WriteString(conn, "GET /v1/manifest HTTP/1.1\r\nHost: x\r\n\r\n"); err != nil {
		return false
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		if ne, ok := err.(net.Error); ok && ne.Timeout() {
			t.Fatal("the server neither answered nor closed the connection")
		}
		return false
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode == http.StatusOK
}

// § 19: connections over max_connections in all, or over max_connections_per_address from
// one address, are refused as they are accepted; a closed one gives its place back.
func TestConnectionsOverTheBoundsAreRefusedAtAccept(t *testing.T) {
	db := storagetest.Open(t, storage.SQLite)
	metrics := web.NewMetrics(db, "test")
	app := web.New(web.Options{DB: db, Version: "test", Logger: unheard, Metrics: metrics})
	limits := protocol.DefaultLimits()
	limits.MaxConnections, limits.MaxConnectionsPerAddress = 5, 3
	base := serveWith(t, app, web.ListenerOptions{Limits: limits, Metrics: metrics})

	var first net.Conn
	for i := range 3 {
		conn := dialFrom(t, base, "127.0.0.1")
		if !answered(t, conn) {
			t.Fatalf("connection %d of 127.0.0.1 was refused", i+1)
		}
		if i == 0 {
			first = conn
		}
	}
	if answered(t, dialFrom(t, base, "127.0.0.1")) {
		t.Fatal("a fourth connection of 127.0.0.1 was answered; max_connections_per_address is 3")
	}
	for i := range 2 {
		if !answered(t, dialFrom(t, base, "127.0.0.2")) {
			t.Fatalf("connection %d of 127.0.0.2 was refused", i+1)
		}
	}
	if answered(t, dialFrom(t, base, "127.0.0.3")) {
		t.Fatal("a sixth connection was answered; max_connections is 5")
	}

	scrape := httptest.NewRecorder()
	metrics.Handler().ServeHTTP(scrape, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	for _, line := range []string{"parley_connections_refused_total 2", "parley_connections_open 5"} {
		if !strings.Contains(scrape.Body.String(), "\n"+line+"\n") {
			t.Errorf("the metrics lack %q", line)
		}
	}

	// A connection that ends gives its place back, as soon as the server has closed it.
	first.Close()
	for start := time.Now(); !answered(t, dialFrom(t, base, "127.0.0.1")); time.Sleep(50 * time.Millisecond) {
		if time.Since(start) > 10*time.Second {
			t.Fatal("a closed connection did not give its place back")
		}
	}
}

// A client that does not read its answers is cut off once it is further behind
// min_read_bytes_per_second than the grace, long before the server's write timeout: it pipelines
// requests and never reads the answers.
func TestReadersSlowerThanTheMinimumAreCutOff(t *testing.T) {
	db := storagetest.Open(t, storage.SQLite)
	app := web.New(web.Options{DB: db, Version: "test", Logger: unheard, Timeouts: web.Timeouts{Write: time.Hour}})
	base := serveWith(t, app, web.ListenerOptions{SlowReaderGrace: 200 * time.Millisecond})
	conn := dialFrom(t, base, "127.0.0.1")
	go func() {
		req := "GET /v1/manifest HTTP/1.1\r\nHost: x\r\n\r\n"
		for range 2000 { // about 24 MB of answers, more than the sockets hold
			if _, err := io.WriteString(conn, req); err != nil {
				return
			}
		}
	}()
	// The server takes the connection and answers into it, then lets go of it.
	for start := time.Now(); app.Server().GetOpenConnectionsCount() == 0; time.Sleep(10 * time.Millisecond) {
		if time.Since(start) > 20*time.Second {
			t.Fatal("the server did not take the connection")
		}
	}
	for start := time.Now(); app.Server().GetOpenConnectionsCount() > 0; time.Sleep(50 * time.Millisecond) {
		if time.Since(start) > 20*time.Second {
			t.Fatal("the server still holds the connection of a client that reads nothing")
		}
	}
}

// unheard is a logger for apps whose logs no test reads.
var unheard = slog.New(slog.NewTextHandler(io.Discard, nil))
