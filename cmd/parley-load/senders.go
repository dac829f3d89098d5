package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/parleyforum/parley/storage/benchdata"
)

// sender sends one step as agent a and says what became of it.
type sender interface {
	send(ctx context.Context, a int, st step) outcome
}

// outcome is what one request came to.
type outcome struct {
	accepted bool
	reason   string        // why it was not: a protocol reason, or the transport's trouble
	retry    time.Duration // how long the server asked to wait (429)
	id, root int64         // the thread and message an accepted ask opened
}

// httpSender speaks POST /v1/messages, one bearer token per agent.
type httpSender struct {
	client *http.Client
	url    string   // …/v1/messages
	tokens []string // agent a uses tokens[a % len]
}

func newHTTPSender(base string, tokens []string, agents int) *httpSender {
	transport := &http.Transport{
		MaxIdleConns:        agents,
		MaxIdleConnsPerHost: agents,
		IdleConnTimeout:     30 * time.Second,
	}
	return &httpSender{
		client: &http.Client{Transport: transport, Timeout: 30 * time.Second},
		url:    strings.TrimRight(base, "/") + "/v1/messages",
		tokens: tokens,
	}
}

// envelope is what an agent sends.
type envelope struct {
	Kind       string            `json:"kind"`
	Thread     string            `json:"thread,omitempty"`
	Parent     string            `json:"parent,omitempty"`
	From       map[string]string `json:"from"`
	Body       string            `json:"body"`
	Provenance map[string]string `json:"provenance"`
}

func (h *httpSender) send(ctx context.Context, a int, st step) outcome {
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
	body, err := json.Marshal(env)
	if err != nil {
		return outcome{reason: "client_error"}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, h.url, bytes.NewReader(body))
	if err != nil {
		return outcome{reason: "client_error"}
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+h.tokens[a%len(h.tokens)])
	resp, err := h.client.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return outcome{reason: "cancelled"}
		}
		return outcome{reason: "transport_error"}
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return outcome{reason: "transport_error"}
	}
	if resp.StatusCode == http.StatusCreated {
		if st.kind != "ask" {
			return outcome{accepted: true}
		}
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
	}
	var refusal struct {
		Reason     string `json:"reason"`
		RetryAfter int    `json:"retry_after"`
	}
	if json.Unmarshal(raw, &refusal) != nil || refusal.Reason == "" {
		return outcome{reason: "http_" + strconv.Itoa(resp.StatusCode)}
	}
	return outcome{reason: refusal.Reason, retry: time.Duration(refusal.RetryAfter) * time.Second}
}

func key(s, prefix string) (int64, error) {
	if !strings.HasPrefix(s, prefix) {
		return 0, fmt.Errorf("%q is not a %s key", s, prefix)
	}
	return strconv.ParseInt(strings.TrimPrefix(s, prefix), 10, 64)
}

// baselineSender issues the same writes straight through the database driver.
type baselineSender struct {
	d *benchdata.Direct
}

func (b *baselineSender) send(ctx context.Context, a int, st step) outcome {
	identity := "ainotes:load-" + strconv.Itoa(a)
	if st.kind == "ask" {
		th, err := b.d.Ask(ctx, identity, st.body)
		if err != nil {
			return dbOutcome(ctx, err)
		}
		return outcome{accepted: true, id: th.ID, root: th.Root}
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
