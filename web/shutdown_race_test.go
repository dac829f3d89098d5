package web_test

import (
	"io"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/parleyforum/parley/storage"
	"github.com/parleyforum/parley/storage/storagetest"
	"github.com/parleyforum/parley/web"
)

// A shutdown that closes a kept-alive connection at the moment its next request arrives
// leaves the server running to its end: the request is dropped, unanswered, and nothing
// panics. The HTTP server once panicked here ("BUG: error in SetWriteDeadline ... use of
// closed network connection") in a goroutine of its own, which no recover reaches: parley
// serve died with status 2 on SIGTERM under load. The listener below holds the request's
// bytes until the shutdown has closed the connection, which makes that interleaving
// certain instead of rare.
func TestShutdownClosingAConnectionAsItsRequestArrives(t *testing.T) {
	db := storagetest.Open(t, storage.SQLite)
	app := web.New(web.Options{DB: db, Version: "test", Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	held := &holdingListener{Listener: web.Listener(ln), arrived: make(chan struct{})}
	served := make(chan error, 1)
	go func() { served <- app.Listener(held) }()

	client := &http.Client{Transport: &http.Transport{MaxConnsPerHost: 1}}
	defer client.CloseIdleConnections()
	url := "http://" + ln.Addr().String() + "/healthz"
	first, err := client.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, first.Body)
	_ = first.Body.Close()

	// The next request goes out on the same connection, now idle; its bytes are held.
	held.arm()
	go func() {
		if r, err := client.Get(url); err == nil {
			_ = r.Body.Close()
		}
	}()
	select {
	case <-held.arrived:
	case <-time.After(10 * time.Second):
		t.Fatal("the second request did not reach the server's connection")
	}
	if err := app.ShutdownWithTimeout(10 * time.Second); err != nil {
		t.Errorf("shutting down: %v", err)
	}
	select {
	case err := <-served:
		if err != nil {
			t.Errorf("the app stopped serving with %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the app did not stop serving")
	}
}

// holdingListener's connections, once armed, hold the next bytes they read until the server
// has closed the connection, and then, at the server's next deadline, wait for the socket to
// be gone as well (Parley's connections close in the background, once their client has
// gone or after a linger): the server reads a request that arrived just before its
// connection was closed, and answers it on a socket closed while it worked.
type holdingListener struct {
	net.Listener
	mu      sync.Mutex
	conn    *holdingConn
	arrived chan struct{}
}

func (l *holdingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	hc := &holdingConn{Conn: c, listener: l, closed: make(chan struct{})}
	l.mu.Lock()
	l.conn = hc
	l.mu.Unlock()
	return hc, nil
}

func (l *holdingListener) arm() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.conn.armed = true
}

// patience bounds each wait of a holdingConn, so that a server that never closes the
// connection still gets its request and the test its answer.
const patience = 5 * time.Second

type holdingConn struct {
	net.Conn
	listener  *holdingListener
	armed     bool // under listener.mu: the next read is held
	handed    bool // under listener.mu: the held bytes went to the server
	closeOnce sync.Once
	closed    chan struct{}
}

func (c *holdingConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	c.listener.mu.Lock()
	hold := c.armed && n > 0
	if hold {
		c.armed, c.handed = false, true
	}
	c.listener.mu.Unlock()
	if hold {
		close(c.listener.arrived)
		select {
		case <-c.closed:
		case <-time.After(patience):
		}
	}
	return n, err
}

func (c *holdingConn) SetReadDeadline(t time.Time) error {
	err := c.Conn.SetReadDeadline(t)
	c.listener.mu.Lock()
	wait := c.handed
	c.handed = false
	c.listener.mu.Unlock()
	if wait {
		c.waitUntilGone()
	}
	return err
}

// waitUntilGone waits until the socket under the connection is closed.
func (c *holdingConn) waitUntilGone() {
	deadline := time.After(patience)
	for c.Conn.SetWriteDeadline(time.Time{}) == nil {
		select {
		case <-deadline:
			return
		case <-time.After(5 * time.Millisecond):
		}
	}
}

func (c *holdingConn) Close() error {
	c.closeOnce.Do(func() { close(c.closed) })
	return c.Conn.Close()
}
