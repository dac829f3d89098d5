package web_test

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/parleyforum/parley/protocol"
	"github.com/parleyforum/parley/storage"
	"github.com/parleyforum/parley/storage/storagetest"
)

// An export whose client goes before its first byte gives its slot back: two such exports
// by one identity, and two more are still admitted. Found: the slot was given back only
// when the export's writer ended, and a writer waiting on the database before its first
// byte went on waiting for a client that had gone, holding the slot (the export's deadline
// is 30 minutes). On Postgres the exports wait on a table another transaction has locked,
// as they would on a slow or hung database; SQLite has no such lock, and there the test
// shows the same with exports that do not wait.
func TestExportSlotIsFreedWhenItsClientLeaves(t *testing.T) {
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		f := newForum(t, db, protocol.Limits{})
		f.ask(f.alice, "Which port does the export use?")
		ctx := context.Background()
		unlock := func() {}
		if db.Kind() == storage.Postgres {
			tx, err := db.BeginTx(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := tx.ExecContext(ctx, "LOCK TABLE messages IN ACCESS EXCLUSIVE MODE"); err != nil {
				t.Fatal(err)
			}
			unlock = func() { tx.Rollback() }
			defer unlock()
		}
		addr := strings.TrimPrefix(f.base, "http://")
		request := "GET /v1/export HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + f.reader + "\r\n\r\n"
		open := func() net.Conn {
			conn, err := net.Dial("tcp", addr)
			if err != nil {
				t.Fatal(err)
			}
			conn.SetDeadline(time.Now().Add(30 * time.Second))
			if _, err := io.WriteString(conn, request); err != nil {
				t.Fatal(err)
			}
			return conn
		}
		// Two exports take both slots, and their clients go without reading a byte.
		gone := []net.Conn{open(), open()}
		time.Sleep(300 * time.Millisecond) // both admitted, their writers begun
		for _, conn := range gone {
			conn.Close()
		}
		time.Sleep(1500 * time.Millisecond) // the server looks at a waiting client every 500 ms
		// Two more are admitted: 200 once the database answers, not 429.
		next := []net.Conn{open(), open()}
		time.Sleep(300 * time.Millisecond)
		unlock()
		for i, conn := range next {
			resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
			if err != nil {
				t.Fatalf("export %d after two that were left: %v", i+1, err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			conn.Close()
			if resp.StatusCode != http.StatusOK {
				t.Errorf("export %d after two that were left: %d %.200s, want 200", i+1, resp.StatusCode, body)
			}
		}
	})
}
