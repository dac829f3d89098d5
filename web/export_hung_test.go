package web_test

import (
	"context"
	"database/sql"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/parleyforum/parley/protocol"
	"github.com/parleyforum/parley/storage"
	"github.com/parleyforum/parley/storage/storagetest"
	"github.com/parleyforum/parley/web"
)

// An export's snapshot is open before its first byte, within the request's deadline: when the
// database does not answer, every format is answered 503 unavailable with Retry-After soon
// after the deadline (§ 19), as every other route. Found: json and jsonl sent no status line
// until the database came back (their deadline was the export's 30 minutes), and dot answered
// 200 with an empty body. On Postgres the database hangs behind a proxy that stops
// forwarding; on SQLite, whose reads no lock holds back, every connection of the pool of
// long reads is held, so that no export can open its snapshot either.
func TestHungDatabaseEveryExportIsUnavailable(t *testing.T) {
	site := func(t *testing.T, db *storage.DB) *forum {
		logs := new(syncBuffer)
		f := &forum{t: t, db: db, logs: logs}
		f.app = web.New(web.Options{DB: db, Version: "test", RequestDeadline: hungDeadline,
			Logger: slog.New(slog.NewTextHandler(logs, nil))})
		f.base = serve(t, f.app)
		f.alice = f.token("ainotes:alice", false, "read,write", nil)
		f.reader = f.token("ainotes:reader", false, "read", nil)
		return f
	}
	check := func(t *testing.T, f *forum, hang, answer func()) {
		th, _ := f.ask(f.alice, "Does the export wait for the database?")
		// One export first, so that the token is verified (and kept) and the realm key read
		// before the hang: the exports then reach their snapshots.
		f.must(f.get("/v1/export?format=json", f.reader), http.StatusOK)
		hang()
		bound := hungDeadline + storage.CommitGrace + 2*time.Second
		for _, format := range protocol.ExportFormatNames() {
			for _, target := range []string{"/v1/export?format=" + format, "/v1/export?format=" + format + "&thread=" + th} {
				start := time.Now()
				status, retryAfter, body := doWith(t, hungClient, f.base, request{method: http.MethodGet, target: target, token: f.reader})
				if took := time.Since(start); took > bound {
					t.Errorf("%s took %v with the database hung", target, took)
				}
				if status != http.StatusServiceUnavailable || retryAfter == "" || !strings.Contains(body, `"reason":"unavailable"`) {
					t.Errorf("%s with the database hung: %d Retry-After %q %.200s", target, status, retryAfter, body)
				}
			}
		}
		answer()
		recovered(t, f)
		for end := time.Now().Add(10 * time.Second); ; time.Sleep(100 * time.Millisecond) {
			if r := f.get("/v1/export?format=dot", f.reader); r.status == http.StatusOK && strings.HasPrefix(string(r.body), "digraph") {
				break
			} else if time.Now().After(end) {
				t.Fatalf("an export 10 s after the database answers again: %d %.200s", r.status, r.body)
			}
		}
	}
	t.Run("sqlite", func(t *testing.T) {
		db := storagetest.Open(t, storage.SQLite)
		var held []*sql.Conn
		check(t, site(t, db), func() {
			pool := db.LongReadPool()
			for range pool.Stats().MaxOpenConnections {
				conn, err := pool.Conn(context.Background())
				if err != nil {
					t.Fatal(err)
				}
				held = append(held, conn)
			}
		}, func() {
			for _, conn := range held {
				conn.Close()
			}
		})
	})
	t.Run("postgres", func(t *testing.T) {
		db, p := storagetest.OpenProxied(t, storage.Options{StatementTimeout: hungDeadline})
		check(t, site(t, db), p.Freeze, p.Thaw)
	})
}
