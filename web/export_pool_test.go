package web_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/parleyforum/parley/graph"
	"github.com/parleyforum/parley/protocol"
	"github.com/parleyforum/parley/storage"
	"github.com/parleyforum/parley/storage/storagetest"
)

// While every export slot is held by a reader that reads nothing, the rest of the forum keeps
// answering (§ 19): exports take their connections from the pool of long reads, a quarter of
// the forum's, and the export slots are no more than it has. Found: each jsonl export held a
// connection of the forum's own pool for as long as its reader took, and 8 slow exports on
// SQLite (32 on Postgres) left no connection for anything else — reads and writes answered
// 503. Here 32 exports are started by 16 read tokens, each read by a client that takes the
// status line and stops; the exports beyond the slots are refused (503, 429) at once, and
// reads and writes are then answered 2xx.
func TestForumAnswersWhileEveryExportIsHeld(t *testing.T) {
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		f := newForum(t, db, protocol.Limits{})
		th, _ := f.ask(f.alice, "How large is the dataset?")
		claim := f.must(f.post("/v1/claims", f.alice, `{"thread":"`+th+`","statement":"large","evidence":[{"kind":"url","ref":"https://example.org/1"}]}`),
			http.StatusCreated).at("claim", "id")
		f.must(f.post("/v1/claims/"+claim+"/attest", f.bob, `{"note":"`+strings.Repeat("seen ", 40)+`","evidence":[{"kind":"url","ref":"https://example.org/2"}]}`),
			http.StatusOK)
		fillWithStances(t, db, claim, 20000) // a dataset of about 8 MB: more than the buffers between
		// The forum's reads below are of another thread: reading the large one is slow of
		// its own, which is not what this test is about.
		other, _ := f.ask(f.bob, "And the forum meanwhile?")
		f.must(f.get("/v1/threads/"+other, f.alice), http.StatusOK)

		var mu sync.Mutex
		var held []net.Conn
		statuses := map[int]int{}
		var wg sync.WaitGroup
		for i := range 16 {
			token := f.token(fmt.Sprintf("ainotes:researcher%d", i), false, "read", nil)
			for range 2 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					conn, status := slowExport(t, f.base, token)
					mu.Lock()
					defer mu.Unlock()
					statuses[status]++
					if status == http.StatusOK {
						held = append(held, conn)
					} else {
						conn.Close()
					}
				}()
			}
		}
		wg.Wait()
		defer func() {
			for _, conn := range held {
				conn.Close()
			}
		}()
		t.Logf("32 exports by 16 tokens: %v", statuses)
		for status := range statuses {
			if status != http.StatusOK && status != http.StatusServiceUnavailable && status != http.StatusTooManyRequests {
				t.Errorf("an export answered %d", status)
			}
		}
		if statuses[http.StatusOK] == 0 {
			t.Fatal("no export is held")
		}
		// Every slot is held: one more export is refused as the server's business.
		if _, status := slowExport(t, f.base, f.reader); status != http.StatusServiceUnavailable {
			t.Errorf("an export beside %d held ones: %d, want 503", statuses[http.StatusOK], status)
		}

		for _, r := range []struct {
			method, target, token, body string
			want                        int
		}{
			{http.MethodGet, "/v1/threads", f.alice, "", http.StatusOK},
			{http.MethodGet, "/v1/threads/" + other, f.alice, "", http.StatusOK},
			{http.MethodGet, "/v1/search?q=forum", f.reader, "", http.StatusOK},
			{http.MethodPost, "/v1/messages", f.alice, `{"kind":"answer","thread":"` + other + `","body":"It answers."}`, http.StatusCreated},
			{http.MethodPost, "/v1/claims", f.bob, `{"thread":"` + other + `","statement":"it answers","evidence":[{"kind":"url","ref":"https://example.org/3"}]}`, http.StatusCreated},
			{http.MethodPost, "/v1/messages", f.alice, `{"kind":"ask","body":"Another question?"}`, http.StatusCreated},
		} {
			var got *reply
			if r.method == http.MethodGet {
				got = f.get(r.target, r.token)
			} else {
				got = f.post(r.target, r.token, r.body)
			}
			if got.status != r.want {
				t.Errorf("%s %s while every export is held: %d %.200s, want %d", r.method, r.target, got.status, got.body, r.want)
				if got.status == http.StatusInternalServerError {
					t.Logf("the server's log:\n%s", f.logs.String())
				}
			}
		}
	})
}

// slowExport asks for the dataset as a reader whose window is a few KB and who reads the
// status line and headers and then nothing: an export admitted is held, its stream blocked
// on the reader. It answers the connection and the status.
func slowExport(t *testing.T, base, token string) (net.Conn, int) {
	t.Helper()
	dialer := net.Dialer{Control: func(_, _ string, raw syscall.RawConn) error {
		var err error
		if cerr := raw.Control(func(fd uintptr) { err = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4096) }); cerr != nil {
			return cerr
		}
		return err
	}}
	conn, err := dialer.Dial("tcp", strings.TrimPrefix(base, "http://"))
	if err != nil {
		t.Error(err)
		return nil, 0
	}
	conn.SetDeadline(time.Now().Add(60 * time.Second))
	if _, err := io.WriteString(conn, "GET /v1/export?format=jsonl HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer "+token+"\r\n\r\n"); err != nil {
		t.Error(err)
		return conn, 0
	}
	resp, err := http.ReadResponse(bufio.NewReaderSize(conn, 512), nil)
	if err != nil {
		t.Error(err)
		return conn, 0
	}
	return conn, resp.StatusCode
}

// fillWithStances adds n attestations to a claim through storage (the API's write rate would
// take minutes), each a copy of its first one by another identity.
func fillWithStances(t *testing.T, db *storage.DB, claim string, n int) {
	t.Helper()
	id, _ := protocol.ParseIDString(claim, "cl_")
	err := db.Write(context.Background(), func(ctx context.Context, f *storage.Forum) error {
		first, err := f.StancesOf(ctx, []int64{id})
		if err != nil {
			return err
		}
		rows := make([]storage.Stance, n)
		for i := range rows {
			rows[i] = first[0]
			rows[i].ID, rows[i].Identity = 0, fmt.Sprintf("test:a%d", i)
		}
		return f.InsertStances(ctx, rows)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// A reader slower than min_read_bytes_per_second for 10 s is cut off (§ 19), and its export's
// slot is free again; a faster one reads the whole export. Found: only a single write that
// took 30 s ended an export, so a reader that kept taking a little held its export, its slot
// and its connection for as long as it liked. With the limit at 1 MiB/s, a reader that takes
// everything at once reads the dataset (about 8 MB) whole; one token's two exports (its
// share) read at 100 KB/s keep a third out (429) until the server cuts them off — while their
// clients still read what the connections had buffered before the cut.
func TestSlowReaderIsCutOff(t *testing.T) {
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		limits := protocol.DefaultLimits()
		limits.MinReadBytesPerSecond = 1 << 20
		f := newForum(t, db, limits)
		th, _ := f.ask(f.alice, "How slowly may one read?")
		claim := f.must(f.post("/v1/claims", f.alice, `{"thread":"`+th+`","statement":"slowly","evidence":[{"kind":"url","ref":"https://example.org/1"}]}`),
			http.StatusCreated).at("claim", "id")
		f.must(f.post("/v1/claims/"+claim+"/attest", f.bob, `{"note":"`+strings.Repeat("seen ", 40)+`","evidence":[{"kind":"url","ref":"https://example.org/2"}]}`),
			http.StatusOK)
		fillWithStances(t, db, claim, 20000)

		whole := f.must(f.get("/v1/export?format=jsonl", f.reader), http.StatusOK).body
		if r, err := graph.CheckDataset(bytes.NewReader(whole)); err != nil || r.Failed() != 0 || len(whole) < 4<<20 {
			t.Fatalf("a reader that takes everything at once: %d bytes, %v %+v", len(whole), err, r)
		}

		stop := make(chan struct{})
		var readers sync.WaitGroup
		defer func() { close(stop); readers.Wait() }()
		for range 2 {
			conn, status := slowExport(t, f.base, f.reader)
			if status != http.StatusOK {
				t.Fatalf("an export: %d", status)
			}
			readers.Add(1)
			go func() { // 10 KB every 100 ms
				defer readers.Done()
				defer conn.Close()
				buf := make([]byte, 10<<10)
				for {
					select {
					case <-stop:
						return
					case <-time.After(100 * time.Millisecond):
					}
					if _, err := io.ReadFull(conn, buf); err != nil {
						return
					}
				}
			}()
		}
		conn, status := slowExport(t, f.base, f.reader)
		conn.Close()
		if status != http.StatusTooManyRequests {
			t.Fatalf("a third export while two are read: %d, want 429", status)
		}
		for end := time.Now().Add(40 * time.Second); ; time.Sleep(500 * time.Millisecond) {
			conn, status := slowExport(t, f.base, f.reader)
			conn.Close()
			if status == http.StatusOK {
				break
			}
			if time.Now().After(end) {
				t.Fatalf("40 s of reading at 100 KB/s, and the slow exports still hold their slots: %d", status)
			}
		}
		// Cut by the pace, or by a write the reader did not take within 10 s.
		if !strings.Contains(f.logs.String(), "export ended early") {
			t.Errorf("the cut was not logged:\n%.2000s", f.logs.String())
		}
	})
}
