package web_test

import (
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/parleyforum/parley/storage"
	"github.com/parleyforum/parley/storage/storagetest"
	"github.com/parleyforum/parley/web"
)

// With the database hung (connections open, nothing answers), every request that needs it
// is answered 503 unavailable with Retry-After once its deadline has passed — over HTTP and
// over MCP, many at once — never 500 and never a hang; when the database answers again, so
// does the server, without a restart.
func TestHungDatabaseIsUnavailableNotAHang(t *testing.T) {
	const deadline = 300 * time.Millisecond
	db, proxy := storagetest.OpenProxied(t, storage.Options{StatementTimeout: deadline})
	f := &forum{t: t, db: db, logs: new(syncBuffer)}
	f.app = web.New(web.Options{DB: db, Version: "test", RequestDeadline: deadline,
		Logger: slog.New(slog.NewTextHandler(f.logs, nil))})
	f.base = serve(t, f.app)
	f.alice = f.token("ainotes:alice", false, "read,write", nil)
	th, _ := f.ask(f.alice, "Still there?")

	proxy.Freeze()
	// A client that gives up long after the deadline: a hang fails the test, it does not
	// hold it up.
	client := &http.Client{Timeout: 30 * time.Second}
	requests := []request{
		{method: http.MethodGet, target: "/v1/threads/" + th, token: f.alice},
		{method: http.MethodPost, target: "/v1/messages", token: f.alice, body: `{"kind":"note","thread":"` + th + `","body":"hello?"}`},
		{method: http.MethodGet, target: "/v1/inbox?wait_seconds=1", token: f.alice},
		{method: http.MethodGet, target: "/v1/threads", token: f.alice},
	}
	var wg sync.WaitGroup
	for i := range 12 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := requests[i%len(requests)]
			status, retryAfter, body := doWith(t, client, f.base, r)
			if status != http.StatusServiceUnavailable || retryAfter == "" || !strings.Contains(body, `"unavailable"`) {
				t.Errorf("%s %s with the database hung: %d Retry-After %q %s", r.method, r.target, status, retryAfter, body)
			}
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		got := f.postMCP(toolCall("read_thread", `{"thread":"`+th+`"}`), http.Header{"Authorization": {"Bearer " + f.alice}})
		if r := refusalOfTool(got); r["reason"] != "unavailable" {
			t.Errorf("MCP read_thread with the database hung: %d %.300s", got.status, got.body)
		}
	}()
	wg.Wait()
	if strings.Contains(f.logs.String(), "request failed") {
		t.Errorf("an outage was logged as a fault of the server: %s", f.logs.String())
	}

	proxy.Thaw()
	recovered(t, f)
	f.must(f.get("/v1/threads/"+th, f.alice), http.StatusOK)
}

// doWith sends r with client and returns the status, Retry-After and body.
func doWith(t *testing.T, client *http.Client, base string, r request) (int, string, string) {
	hr, err := http.NewRequest(r.method, base+r.target, strings.NewReader(r.body))
	if err != nil {
		t.Error(err)
		return 0, "", ""
	}
	hr.Header.Set("Authorization", "Bearer "+r.token)
	if r.body != "" {
		hr.Header.Set("Content-Type", "application/json")
	}
	resp, err := client.Do(hr)
	if err != nil {
		t.Errorf("%s %s: %v", r.method, r.target, err)
		return 0, "", ""
	}
	reply := readReply(t, resp)
	return reply.status, reply.header.Get("Retry-After"), string(reply.body)
}
