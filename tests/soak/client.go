package soak

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// transport speaks one of Parley's bindings: the same operation, the same arguments.
type transport interface {
	name() string
	call(ctx context.Context, token, op string, args map[string]any) answer
}

// answer is what one call came to: a result, a refusal of § 9, or no answer at all.
type answer struct {
	result   json.RawMessage // the operation's result object, when it was accepted
	reason   string          // the refusal's reason, when it was refused
	failed   error           // no decision came back: the connection broke, a fault of the server
	replayed bool            // the result is the first answer of a write retried under its key (HTTP says so)
}

// keyArgument is the argument that carries a write's idempotency key: over MCP as it is,
// over HTTP moved into the header Idempotency-Key.
const keyArgument = "idempotency_key"

func (a answer) ok() bool { return a.failed == nil && a.reason == "" }

// retryable: nothing was decided, or the server asked to come back (the database was down,
// too many waits at once).
func (a answer) retryable() bool {
	return a.failed != nil || a.reason == "unavailable" || a.reason == "rate_limited"
}

func (a answer) String() string {
	switch {
	case a.failed != nil:
		return a.failed.Error()
	case a.reason != "":
		return a.reason
	}
	return "ok"
}

func newHTTPClient(conns int) *http.Client {
	return &http.Client{
		Timeout:   20 * time.Second,
		Transport: &http.Transport{MaxIdleConns: conns, MaxIdleConnsPerHost: conns, IdleConnTimeout: 30 * time.Second},
	}
}

// httpTransport speaks /v1.
type httpTransport struct {
	client *http.Client
	base   string
}

func (h *httpTransport) name() string { return "http" }

func (h *httpTransport) call(ctx context.Context, token, op string, args map[string]any) answer {
	var method, path, key string
	var body []byte
	query := url.Values{}
	switch op {
	case "send":
		method, path = http.MethodPost, "/v1/messages"
		envelope := make(map[string]any, len(args))
		for k, v := range args {
			envelope[k] = v
		}
		key, _ = envelope[keyArgument].(string)
		delete(envelope, keyArgument)
		body, _ = json.Marshal(envelope)
	case "read_thread":
		method, path = http.MethodGet, "/v1/threads/"+args["thread"].(string)
	case "read_events":
		method, path = http.MethodGet, "/v1/threads/"+args["thread"].(string)+"/events"
	case "list_threads", "inbox":
		method, path = http.MethodGet, map[string]string{"list_threads": "/v1/threads", "inbox": "/v1/inbox"}[op]
		for k, v := range args {
			query.Set(k, fmt.Sprint(v))
		}
	default:
		return answer{failed: fmt.Errorf("no route for %s", op)}
	}
	if len(query) > 0 {
		path += "?" + query.Encode()
	}
	req, err := http.NewRequestWithContext(ctx, method, h.base+path, bytes.NewReader(body))
	if err != nil {
		return answer{failed: err}
	}
	req.Header.Set("Authorization", "Bearer "+token)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if key != "" {
		req.Header.Set("Idempotency-Key", key)
	}
	resp, err := h.client.Do(req)
	if err != nil {
		return answer{failed: err}
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return answer{failed: err}
	}
	if resp.StatusCode/100 == 2 {
		return answer{result: raw, replayed: resp.Header.Get("Idempotent-Replayed") == "true"}
	}
	var refusal struct {
		Reason string `json:"reason"`
	}
	if json.Unmarshal(raw, &refusal) != nil || refusal.Reason == "" {
		return answer{failed: fmt.Errorf("%s %s: status %d without a reason: %.200s", method, path, resp.StatusCode, raw)}
	}
	return answer{reason: refusal.Reason}
}

// mcpTransport speaks /mcp: stateless JSON-RPC, one tools/call per request.
type mcpTransport struct {
	client *http.Client
	base   string
}

func (m *mcpTransport) name() string { return "mcp" }

func (m *mcpTransport) call(ctx context.Context, token, op string, args map[string]any) answer {
	body, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tools/call",
		"params": map[string]any{"name": op, "arguments": args}})
	if err != nil {
		return answer{failed: err}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, m.base+"/mcp", bytes.NewReader(body))
	if err != nil {
		return answer{failed: err}
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := m.client.Do(req)
	if err != nil {
		return answer{failed: err}
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return answer{failed: err}
	}
	if resp.StatusCode != http.StatusOK {
		return answer{failed: fmt.Errorf("/mcp %s: status %d: %.200s", op, resp.StatusCode, raw)}
	}
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		raw = sseData(raw)
	}
	var rpc struct {
		Result *struct {
			StructuredContent json.RawMessage `json:"structuredContent"`
			IsError           bool            `json:"isError"`
		} `json:"result"`
		Error *struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal(raw, &rpc); err != nil {
		return answer{failed: fmt.Errorf("/mcp %s: unreadable answer: %v: %.200s", op, err, raw)}
	}
	switch {
	case rpc.Error != nil:
		return answer{failed: fmt.Errorf("/mcp %s: JSON-RPC error %d %s", op, rpc.Error.Code, rpc.Error.Message)}
	case rpc.Result == nil:
		return answer{failed: fmt.Errorf("/mcp %s: no result: %.200s", op, raw)}
	case rpc.Result.IsError:
		var refusal struct {
			Reason string `json:"reason"`
		}
		if json.Unmarshal(rpc.Result.StructuredContent, &refusal) != nil || refusal.Reason == "" {
			return answer{failed: fmt.Errorf("/mcp %s: an error without a reason: %.200s", op, raw)}
		}
		return answer{reason: refusal.Reason}
	}
	return answer{result: rpc.Result.StructuredContent}
}

// sseData is the data of the first event of a Server-Sent Events body.
func sseData(raw []byte) []byte {
	var data []byte
	for _, line := range bytes.Split(raw, []byte("\n")) {
		if d, ok := bytes.CutPrefix(line, []byte("data:")); ok {
			data = append(data, bytes.TrimSpace(d)...)
		} else if len(bytes.TrimSpace(line)) == 0 && data != nil {
			break
		}
	}
	return data
}

// Wire shapes, as much of them as the checks read.
type wireMessage struct {
	ID      string         `json:"id"`
	Kind    string         `json:"kind"`
	Thread  string         `json:"thread"`
	Body    string         `json:"body"`
	Replies []*wireMessage `json:"replies"`
}

type wireThread struct {
	ID           string `json:"id"`
	State        string `json:"state"`
	MessageCount int    `json:"message_count"`
}

type sent struct {
	Message wireMessage `json:"message"`
	Thread  wireThread  `json:"thread"`
}

type inboxPage struct {
	Items []struct {
		Thread wireThread `json:"thread"`
	} `json:"items"`
	Cursor string `json:"cursor"`
	More   bool   `json:"more"`
}

// key reads the number of a prefixed key: th_12 → 12.
func key(s, prefix string) (int64, error) {
	rest, ok := strings.CutPrefix(s, prefix)
	if !ok {
		return 0, fmt.Errorf("%q is not a %s key", s, prefix)
	}
	return strconv.ParseInt(rest, 10, 64)
}
