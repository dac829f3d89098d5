package web

import (
	"errors"
	"io"
	"net"
	"os"
	"testing"
	"time"
)

// tcpPair is a connection on loopback: the server's end (paced as rate, grace) and the
// client's.
func tcpPair(t *testing.T, rate int, grace time.Duration) (*gracefulConn, *net.TCPConn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan *net.TCPConn, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			accepted <- nil
			return
		}
		accepted <- c.(*net.TCPConn)
	}()
	client, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	server := <-accepted
	if server == nil {
		t.Fatal("no connection accepted")
	}
	t.Cleanup(func() { server.Close(); client.Close() })
	return &gracefulConn{TCPConn: server, pace: newPacing(rate, grace)}, client.(*net.TCPConn)
}

// writeAll writes n bytes to conn in writes of 4 KiB, as the server writes an answer, and
// reports the first error.
func writeAll(conn net.Conn, n int) error {
	chunk := make([]byte, 4<<10)
	for written := 0; written < n; written += len(chunk) {
		if _, err := conn.Write(chunk); err != nil {
			return err
		}
	}
	return nil
}

// § 19: a reader that falls more than the grace behind the slowest rate allowed is cut off,
// however long the server's own deadline is; one that keeps up is not, and neither is one
// whose answer has pauses of the server's own making.
func TestSlowReadersAreCutOff(t *testing.T) {
	const rate, grace = 64 << 10, 100 * time.Millisecond
	for _, c := range []struct {
		name string
		read func(*net.TCPConn)
	}{
		{"a reader that takes nothing", func(*net.TCPConn) {}},
		{"a reader at a third of the rate", func(conn *net.TCPConn) {
			buf := make([]byte, 1<<10)
			for {
				if _, err := io.ReadFull(conn, buf); err != nil {
					return
				}
				time.Sleep(time.Second * time.Duration(len(buf)) / (rate / 3))
			}
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			server, client := tcpPair(t, rate, grace)
			go c.read(client)
			// The server's own deadline is far off: the pace cuts first.
			if err := server.SetWriteDeadline(time.Now().Add(time.Hour)); err != nil {
				t.Fatal(err)
			}
			// What holds the test up is bounded: a pace that never cuts fails it.
			go func() { time.Sleep(20 * time.Second); server.TCPConn.Close() }()
			err := writeAll(server, 64<<20)
			if !errors.Is(err, os.ErrDeadlineExceeded) {
				t.Fatalf("64 MiB written to a slow reader: %v, want the write deadline exceeded", err)
			}
		})
	}

	t.Run("a reader that keeps up", func(t *testing.T) {
		server, client := tcpPair(t, rate, grace)
		go io.Copy(io.Discard, client)
		if err := writeAll(server, 4<<20); err != nil {
			t.Fatalf("4 MiB to a reader that takes them at once: %v", err)
		}
	})

	t.Run("pauses of the server's own", func(t *testing.T) {
		server, client := tcpPair(t, rate, grace)
		go io.Copy(io.Discard, client)
		for range 3 {
			if err := writeAll(server, 16<<10); err != nil {
				t.Fatalf("a write after a pause: %v", err)
			}
			time.Sleep(3 * grace) // the feed between two events
		}
	})

	t.Run("the server's own deadline still holds", func(t *testing.T) {
		server, _ := tcpPair(t, rate, time.Hour)
		if err := server.SetWriteDeadline(time.Now().Add(grace)); err != nil {
			t.Fatal(err)
		}
		if err := writeAll(server, 64<<20); !errors.Is(err, os.ErrDeadlineExceeded) {
			t.Fatalf("past the server's deadline: %v, want the write deadline exceeded", err)
		}
	})
}
