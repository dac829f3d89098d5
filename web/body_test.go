package web_test

import (
	"fmt"
	"io"
	"net"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/parleyforum/parley/protocol"
	"github.com/parleyforum/parley/storage"
	"github.com/parleyforum/parley/storage/storagetest"
	"github.com/parleyforum/parley/web"
)

// heapInUse is the memory the Go heap holds after a collection.
func heapInUse() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// § 19: bytes held follow bytes received. Requests that declare a body of a megabyte and
// send one byte of it make the server hold what they sent, not what they declared — on a
// route that reads a body, and on one that reads none. (fasthttp reserved the declared
// length before any handler ran: 2,000 such sockets took a server from 123 MB to 2 GB.)
func TestBytesHeldFollowBytesReceived(t *testing.T) {
	db := storagetest.Open(t, storage.SQLite)
	app := web.New(web.Options{DB: db, Version: "test", Logger: unheard})
	const perTarget = 50
	targets := []string{"PUT /v1/artifacts", "POST /mcp", "POST /login", "GET /healthz"}
	limits := protocol.DefaultLimits()
	limits.MaxConnectionsPerAddress = 2 * perTarget * len(targets)
	base := serveWith(t, app, web.ListenerOptions{Limits: limits})
	declared := protocol.DefaultLimits().ArtifactMaxBytes // the most any of these routes takes

	before := heapInUse()
	// A route that reads no body, or refuses what it declares, answers and closes the
	// connection; the others wait for the rest of the body.
	var closed atomic.Int32
	for _, target := range targets {
		method, path, _ := strings.Cut(target, " ")
		for range perTarget {
			conn, err := net.Dial("tcp", strings.TrimPrefix(base, "http://"))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { conn.Close() })
			head := fmt.Sprintf("%s %s HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n{", method, path, declared)
			if _, err := io.WriteString(conn, head); err != nil {
				t.Fatal(err)
			}
			go func() {
				_, _ = io.Copy(io.Discard, conn)
				closed.Add(1)
			}()
		}
	}
	n := perTarget * len(targets)
	// The heap is measured once every connection is either held by the server or answered
	// and closed, and the heap has stopped growing.
	for start := time.Now(); app.Server().GetOpenConnectionsCount()+closed.Load() < int32(n); time.Sleep(20 * time.Millisecond) {
		if time.Since(start) > 20*time.Second {
			t.Fatalf("%d of %d connections open, %d closed", app.Server().GetOpenConnectionsCount(), n, closed.Load())
		}
	}
	held := heapInUse()
	for range 20 {
		time.Sleep(100 * time.Millisecond)
		now := heapInUse()
		if now <= held+held/100 {
			held = max(held, now)
			break
		}
		held = now
	}
	grown := int64(held) - int64(before)
	const perRequest = 64 << 10 // buffers of one connection and its request, a fraction of the declared megabyte
	if grown > int64(n*perRequest) {
		t.Fatalf("%d requests that sent 1 byte of a declared %d took the heap up by %d MB (%d KB each), want at most %d KB each",
			n, declared, grown>>20, grown/int64(n)>>10, perRequest>>10)
	}
	t.Logf("%d requests that sent 1 byte of %d declared: heap %+d KB (%d KB each)", n, declared, grown>>10, grown/int64(n)>>10)
}
