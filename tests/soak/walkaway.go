package soak

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"strconv"
	"sync"
	"time"
)

// walkaway is the client that leaves mid-request, in turns: a body cut off halfway, a request
// whose answer is never read (a send among them, which may land), a long poll and a feed
// dropped while they wait — over HTTP and MCP. None may cost the server more than the
// request itself: no place among the waits held, no write half made.
type walkaway struct {
	r     *run
	addr  string
	token string
	n     int
}

var walkawayKinds = []string{"half-body http", "half-body mcp", "unread send http", "unread send mcp",
	"dropped long poll http", "dropped long poll mcp", "dropped feed"}

func (w *walkaway) loop(ctx context.Context, every time.Duration) {
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		kind := walkawayKinds[w.n%len(walkawayKinds)]
		w.n++
		if err := w.leave(ctx, kind); err != nil {
			// The server may be down for a fault of the run: the client could not even start.
			w.r.stats.add("walkaway "+kind+" not connected", 1)
			continue
		}
		w.r.stats.add("walkaway "+kind, 1)
	}
}

func (w *walkaway) leave(ctx context.Context, kind string) error {
	switch kind {
	case "half-body http":
		env, key := w.envelope(false, "http")
		return w.raw("POST", "/v1/messages", env, key, 0.5, 0)
	case "half-body mcp":
		env, _ := w.envelope(false, "mcp")
		return w.raw("POST", "/mcp", w.rpc("send", env), "", 0.5, 0)
	case "unread send http":
		env, key := w.envelope(true, "http")
		return w.raw("POST", "/v1/messages", env, key, 1, 0)
	case "unread send mcp":
		env, _ := w.envelope(true, "mcp")
		return w.raw("POST", "/mcp", w.rpc("send", env), "", 1, 0)
	case "dropped long poll http":
		return w.raw("GET", "/v1/inbox?wait_seconds=20", nil, "", 1, 300*time.Millisecond)
	case "dropped long poll mcp":
		return w.raw("POST", "/mcp", w.rpc("inbox", json.RawMessage(`{"wait_seconds":20}`)), "", 1, 300*time.Millisecond)
	case "dropped feed":
		return w.raw("GET", "/v1/feed", nil, "", 1, 500*time.Millisecond)
	}
	return fmt.Errorf("unknown kind %q", kind)
}

// envelope is an ask of the walkaway identity over a transport, and its idempotency key:
// over MCP an argument, over HTTP a header the caller sends. A send that is sent whole but
// whose answer is never read (ledgered) is in the ledger, unacknowledged: the check counts it
// if it landed. One cut off halfway must never land.
func (w *walkaway) envelope(ledgered bool, transport string) (json.RawMessage, string) {
	const text = "Does anyone know why the nightly export stops after the first thousand threads?"
	body := "[soak cut off] " + text
	key := fmt.Sprintf("soak-%s-cut-%d", w.r.ledger.run, w.n)
	if ledgered {
		wr := w.r.ledger.open(-1, transport, "ask", 0, text)
		w.r.ledger.attempt(wr)
		body, key = wr.body, wr.key
	}
	env := map[string]any{"kind": "ask", "body": body, "from": map[string]string{"extension": "walkaway"}}
	if transport == "mcp" {
		env[keyArgument] = key
	}
	raw, _ := json.Marshal(env)
	return raw, key
}

func (w *walkaway) rpc(tool string, args json.RawMessage) json.RawMessage {
	raw, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tools/call",
		"params": map[string]any{"name": tool, "arguments": args}})
	return raw
}

// raw writes a request by hand — of its body only the given fraction, with the idempotency
// key when there is one — waits, reads at most the start of the answer, and closes the
// connection.
func (w *walkaway) raw(method, path string, body []byte, key string, fraction float64, linger time.Duration) error {
	conn, err := net.DialTimeout("tcp", w.addr, 2*time.Second)
	if err != nil {
		return err
	}
	defer conn.Close()
	head := method + " " + path + " HTTP/1.1\r\nHost: " + w.addr + "\r\nAuthorization: Bearer " + w.token +
		"\r\nAccept: application/json, text/event-stream\r\n"
	if body != nil {
		head += "Content-Type: application/json\r\nContent-Length: " + strconv.Itoa(len(body)) + "\r\n"
	}
	if key != "" {
		head += "Idempotency-Key: " + key + "\r\n"
	}
	head += "\r\n"
	send := append([]byte(head), body[:int(float64(len(body))*fraction)]...)
	_ = conn.SetDeadline(time.Now().Add(2 * time.Second))
	if _, err := conn.Write(send); err != nil {
		return err
	}
	if linger > 0 {
		// Read what comes (a feed's first event) and leave while the server still waits.
		_ = conn.SetReadDeadline(time.Now().Add(linger))
		_, _ = bufio.NewReader(conn).ReadString('\n')
		time.Sleep(linger / 2)
	}
	return nil
}

// placesFreed opens as many long polls at once as one identity may hold: none may be refused,
// as none of those the walkaway dropped may still hold its place.
func (w *walkaway) placesFreed(ctx context.Context, tr transport, places int) error {
	var mu sync.Mutex
	var refused []string
	var wg sync.WaitGroup
	for range places {
		wg.Go(func() {
			ans := tr.call(ctx, w.token, "inbox", map[string]any{"wait_seconds": 1, "limit": 1})
			if !ans.ok() {
				mu.Lock()
				refused = append(refused, ans.String())
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if len(refused) > 0 {
		return fmt.Errorf("%d of %d long polls of the walkaway identity were refused after the run: %v", len(refused), places, refused)
	}
	return nil
}
