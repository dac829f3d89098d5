package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/parleyforum/parley/storage/benchdata"
)

// sender carries out one step as agent a and says what became of it.
type sender interface {
	do(ctx context.Context, a int, st step) outcome
}

// outcome is what one request came to.
type outcome struct {
	accepted bool
	reason   string        // why it was not: a protocol reason, or the transport's trouble
	retry    time.Duration // how long the server asked to wait (429)
	id, root int64         // the thread and message an accepted ask opened
	cursor   string        // the cursor an inbox answered
}

// envelope is what an agent sends.
type envelope struct {
	Kind       string            `json:"kind"`
	Thread     string            `json:"thread,omitempty"`
	Room       string            `json:"room,omitempty"`
	Parent     string            `json:"parent,omitempty"`
	From       map[string]string `json:"from"`
	Body       string            `json:"body"`
	Provenance map[string]string `json:"provenance"`
}

// envelopeOf is agent a's envelope for a send.
func envelopeOf(a int, st step) envelope {
	env := envelope{
		Kind: st.kind,
		// Its own extension per agent: agents that share a token are still distinct
		// speakers, so none replies to itself.
		From:       map[string]string{"extension": "agent-" + strconv.Itoa(a)},
		Body:       st.body,
		Provenance: map[string]string{"client": "parley-load"},
	}
	if st.thread != nil {
		env.Thread = "th_" + strconv.FormatInt(st.thread.id, 10)
		if st.kind == "answer" || st.kind == "note" {
			env.Parent = "msg_" + strconv.FormatInt(st.thread.root, 10)
		}
	}
	return env
}

// accepted reads what the client needs of an accepted answer (the object of § 10, over HTTP
// the body, over MCP the structuredContent): the thread an ask opened, the inbox's cursor.
func accepted(st step, raw []byte) outcome {
	switch st.kind {
	case "ask":
		var res struct {
			Message struct{ ID string } `json:"message"`
			Thread  struct{ ID string } `json:"thread"`
		}
		if err := json.Unmarshal(raw, &res); err != nil {
			return outcome{accepted: true, reason: "unreadable_answer"}
		}
		id, err1 := key(res.Thread.ID, "th_")
		root, err2 := key(res.Message.ID, "msg_")
		if err1 != nil || err2 != nil {
			return outcome{accepted: true, reason: "unreadable_answer"}
		}
		return outcome{accepted: true, id: id, root: root}
	case opInbox:
		var res struct {
			Cursor string `json:"cursor"`
		}
		if err := json.Unmarshal(raw, &res); err != nil {
			return outcome{accepted: true, reason: "unreadable_answer"}
		}
		return outcome{accepted: true, cursor: res.Cursor}
	}
	return outcome{accepted: true}
}

// retryable: nothing was decided (the connection broke, the server failed), or the server
// asked to come back (unavailable, rate_limited): the write is sent again, under its key.
func (o outcome) retryable() bool {
	switch o.reason {
	case "transport_error", "unavailable", "rate_limited":
		return true
	}
	return strings.HasPrefix(o.reason, "http_5") || o.reason == "jsonrpc_-32603"
}

// refused reads a refusal object of § 9.
func refused(raw []byte, otherwise string) outcome {
	var refusal struct {
		Reason     string `json:"reason"`
		RetryAfter int    `json:"retry_after"`
	}
	if json.Unmarshal(raw, &refusal) != nil || refusal.Reason == "" {
		return outcome{reason: otherwise}
	}
	return outcome{reason: refusal.Reason, retry: time.Duration(refusal.RetryAfter) * time.Second}
}

// httpSender speaks the HTTP binding (§ 10), one bearer token per agent.
type httpSender struct {
	client *http.Client
	base   string   // http://host:port
	tokens []string // agent a uses tokens[a % len]
	room   string   // the room the agents' questions open threads in; "" for general
}

func newHTTPClient(agents int) *http.Client {
	transport := &http.Transport{
		MaxIdleConns:        agents,
		MaxIdleConnsPerHost: agents,
		IdleConnTimeout:     30 * time.Second,
	}
	return &http.Client{Transport: transport, Timeout: 30 * time.Second}
}

func newHTTPSender(base string, tokens []string, agents int) *httpSender {
	return &httpSender{client: newHTTPClient(agents), base: strings.TrimRight(base, "/"), tokens: tokens}
}

func (h *httpSender) do(ctx context.Context, a int, st step) outcome {
	method, path, status := http.MethodGet, "", http.StatusOK
	var body io.Reader
	switch st.kind {
	case opInbox:
		path = "/v1/inbox?limit=20"
		if st.cursor != "" {
			path += "&since=" + url.QueryEscape(st.cursor)
		}
	case opReadThread:
		path = "/v1/threads/th_" + strconv.FormatInt(st.thread.id, 10)
	case opListThreads:
		path = "/v1/threads?limit=20"
	case opSearch:
		path = "/v1/search?limit=20&q=" + url.QueryEscape(st.query)
	default:
		env := envelopeOf(a, st)
		if st.kind == "ask" {
			env.Room = h.room
		}
		raw, err := json.Marshal(env)
		if err != nil {
			return outcome{reason: "client_error"}
		}
		method, path, status, body = http.MethodPost, "/v1/messages", http.StatusCreated, bytes.NewReader(raw)
	}
	req, err := http.NewRequestWithContext(ctx, method, h.base+path, body)
	if err != nil {
		return outcome{reason: "client_error"}
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if st.key != "" {
		req.Header.Set("Idempotency-Key", st.key)
	}
	req.Header.Set("Authorization", "Bearer "+h.tokens[a%len(h.tokens)])
	resp, err := h.client.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return outcome{reason: "cancelled"}
		}
		return outcome{reason: "transport_error"}
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	if err != nil {
		return outcome{reason: "transport_error"}
	}
	if resp.StatusCode == status {
		return accepted(st, raw)
	}
	return refused(raw, "http_"+strconv.Itoa(resp.StatusCode))
}

func key(s, prefix string) (int64, error) {
	if !strings.HasPrefix(s, prefix) {
		return 0, fmt.Errorf("%q is not a %s key", s, prefix)
	}
	return strconv.ParseInt(strings.TrimPrefix(s, prefix), 10, 64)
}

// directSender issues the same writes straight through the database driver.
type directSender struct {
	d *benchdata.Direct
}

func (b *directSender) do(ctx context.Context, a int, st step) outcome {
	identity := "ainotes:load-" + strconv.Itoa(a)
	switch st.kind {
	case "ask":
		th, err := b.d.Ask(ctx, identity, st.body)
		if err != nil {
			return dbOutcome(ctx, err)
		}
		return outcome{accepted: true, id: th.ID, root: th.Root}
	case opInbox, opReadThread, opListThreads, opSearch:
		return outcome{reason: "client_error"} // the baseline writes only (mode.writesOnly)
	}
	th := benchdata.DirectThread{ID: st.thread.id, Root: st.thread.root, Creator: "ainotes:load-" + strconv.Itoa(st.thread.asker)}
	if err := b.d.Reply(ctx, th, st.kind, identity, st.body, st.from, st.to); err != nil {
		return dbOutcome(ctx, err)
	}
	return outcome{accepted: true}
}

func dbOutcome(ctx context.Context, err error) outcome {
	if ctx.Err() != nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return outcome{reason: "cancelled"}
	}
	return outcome{reason: "database_error"}
}
