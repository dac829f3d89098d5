package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
)

// mcpSender speaks MCP as an agent's client does once connected: each step is one JSON-RPC
// tools/call POSTed to /mcp (Streamable HTTP), with the bearer token and the Accept header
// the transport asks for. Parley's MCP server is stateless — no session, no initialize
// needed before a call — so these are exactly the bytes a client such as the SDK's puts on
// the wire per call, without the client's own work around them: on a machine shared by the
// load and the server, a heavier client would take CPU from the server and lower its figure.
type mcpSender struct {
	client *http.Client
	url    string   // …/mcp
	tokens []string // agent a uses tokens[a % len]
	ids    atomic.Int64
}

// mcpProtocolVersion is what a client that has initialized sends with every request.
const mcpProtocolVersion = "2025-06-18"

func newMCPSender(base string, tokens []string, agents int) *mcpSender {
	return &mcpSender{client: newHTTPClient(agents), url: strings.TrimRight(base, "/") + "/mcp", tokens: tokens}
}

// keyedEnvelope is send's arguments over MCP: the envelope and its idempotency key.
type keyedEnvelope struct {
	envelope
	IdempotencyKey string `json:"idempotency_key,omitempty"`
}

// mcpRequest is a JSON-RPC request of tools/call.
type mcpRequest struct {
	JSONRPC string `json:"jsonrpc"`
	ID      int64  `json:"id"`
	Method  string `json:"method"`
	Params  struct {
		Name      string `json:"name"`
		Arguments any    `json:"arguments"`
	} `json:"params"`
}

func (m *mcpSender) do(ctx context.Context, a int, st step) outcome {
	req := mcpRequest{JSONRPC: "2.0", ID: m.ids.Add(1), Method: "tools/call"}
	switch st.kind {
	case opInbox:
		args := map[string]any{"limit": 20}
		if st.cursor != "" {
			args["since"] = st.cursor
		}
		req.Params.Name, req.Params.Arguments = "inbox", args
	case opReadThread:
		req.Params.Name, req.Params.Arguments = "read_thread", map[string]any{"thread": "th_" + strconv.FormatInt(st.thread.id, 10)}
	case opListThreads:
		req.Params.Name, req.Params.Arguments = "list_threads", map[string]any{"limit": 20}
	case opSearch:
		req.Params.Name, req.Params.Arguments = "search", map[string]any{"q": st.query, "limit": 20}
	default:
		req.Params.Name, req.Params.Arguments = "send", keyedEnvelope{envelopeOf(a, st), st.key}
	}
	raw, err := json.Marshal(req)
	if err != nil {
		return outcome{reason: "client_error"}
	}
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, m.url, bytes.NewReader(raw))
	if err != nil {
		return outcome{reason: "client_error"}
	}
	hreq.Header.Set("Content-Type", "application/json")
	hreq.Header.Set("Accept", "application/json, text/event-stream")
	hreq.Header.Set("MCP-Protocol-Version", mcpProtocolVersion)
	hreq.Header.Set("Authorization", "Bearer "+m.tokens[a%len(m.tokens)])
	resp, err := m.client.Do(hreq)
	if err != nil {
		if ctx.Err() != nil {
			return outcome{reason: "cancelled"}
		}
		return outcome{reason: "transport_error"}
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	if err != nil {
		return outcome{reason: "transport_error"}
	}
	var answer struct {
		Result *struct {
			StructuredContent json.RawMessage `json:"structuredContent"`
			IsError           bool            `json:"isError"`
		} `json:"result"`
		Error *struct {
			Code int `json:"code"`
		} `json:"error"`
	}
	if resp.StatusCode != http.StatusOK || json.Unmarshal(body, &answer) != nil {
		return outcome{reason: "http_" + strconv.Itoa(resp.StatusCode)}
	}
	switch {
	case answer.Error != nil:
		return outcome{reason: "jsonrpc_" + strconv.Itoa(answer.Error.Code)}
	case answer.Result == nil:
		return outcome{reason: "unreadable_answer"}
	case answer.Result.IsError:
		return refused(answer.Result.StructuredContent, "tool_error")
	}
	return accepted(st, answer.Result.StructuredContent)
}
