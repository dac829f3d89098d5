package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"mime"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"sync"
)

// A tools/call is almost every request an agent makes, and the SDK serves each one of a
// stateless server through a session made for it: the body read and decoded again, a
// JSON-RPC connection with goroutines of its own, the request and its answer handed between
// them over channels, then the session closed. For a call whose answer is one JSON object,
// none of that decides anything, and on a busy server the hand-offs cost more time than the
// tool's own work. So a tools/call that the SDK would answer with nothing but the tool's
// result is answered here, with the same bytes; every other request — initialize,
// tools/list, a header or version the SDK refuses, an unknown tool, a newer protocol — goes
// to the SDK as before.

// legacyVersions are the MCP-Protocol-Version values under which the SDK answers a
// tools/call with the tool's result alone. From 2026-07-28 on, it checks more headers and
// marks results with a resultType, so those calls stay with it.
var legacyVersions = map[string]bool{
	"":           true, // no header: the SDK takes 2025-03-26
	"2024-11-05": true,
	"2025-03-26": true,
	"2025-06-18": true,
	"2025-11-25": true,
}

// directCall is a tools/call answered without the SDK's session: its tool and its
// arguments as sent.
type directCall struct {
	id   json.RawMessage // as the SDK echoes it
	tool tool
	args []byte
}

// direct returns the call to answer without the SDK, or false when the SDK must answer the
// request, because it is not a tools/call or because the SDK would refuse it or answer it
// otherwise. body has passed checkFrame.
func (h *Handler) direct(r *http.Request, body []byte) (directCall, bool) {
	if !h.acceptsDirect(r) {
		return directCall{}, false
	}
	f, ok := readFrame(body)
	if !ok || string(f.Method) != `"tools/call"` || f.ID == nil {
		return directCall{}, false
	}
	var params map[string]json.RawMessage
	if json.Unmarshal(f.Params, &params) != nil {
		return directCall{}, false
	}
	var name string
	for key, value := range params {
		switch key {
		case "name":
			if json.Unmarshal(value, &name) != nil {
				return directCall{}, false
			}
		case "arguments":
		default: // _meta and what newer versions add: the SDK's to read
			return directCall{}, false
		}
	}
	t, known := h.byName[name]
	id, echoed := echoedID(f.ID)
	if !known || !echoed {
		return directCall{}, false
	}
	return directCall{id: id, tool: t, args: arguments(params["arguments"])}, true
}

// acceptsDirect reports whether the SDK would let a POST through to its tools with the
// answer as application/json: the checks of its StreamableHTTPHandler, in its terms.
func (h *Handler) acceptsDirect(r *http.Request) bool {
	if r.Method != http.MethodPost || len(r.Header.Values("Last-Event-ID")) > 0 {
		return false
	}
	// The SDK refuses a foreign Host on a loopback listener (DNS rebinding).
	if local, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr); ok && local != nil {
		if isLoopback(local.String()) && !isLoopback(r.Host) {
			return false
		}
	}
	if !legacyVersions[r.Header.Get("MCP-Protocol-Version")] {
		return false
	}
	if mediaType, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mediaType != "application/json" {
		return false
	}
	jsonOK, streamOK := accepts(r.Header.Values("Accept"))
	return jsonOK && streamOK
}

// accepts reads Accept as the SDK does: it must name JSON and an event stream, each
// directly or by a wildcard.
func accepts(values []string) (jsonOK, streamOK bool) {
	for _, value := range values {
		for _, item := range strings.Split(value, ",") {
			base, _, _ := strings.Cut(strings.TrimSpace(item), ";")
			switch strings.ToLower(strings.TrimSpace(base)) {
			case "application/json", "application/*":
				jsonOK = true
			case "text/event-stream", "text/*":
				streamOK = true
			case "*/*":
				jsonOK, streamOK = true, true
			}
		}
	}
	return jsonOK, streamOK
}

// isLoopback is the SDK's test of a loopback address or Host: localhost, or a loopback IP,
// with or without a port.
func isLoopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		host = strings.Trim(addr, "[]")
	}
	if host == "localhost" {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.IsLoopback()
}

// echoedID is the request's id as the SDK writes it back: a string re-encoded, an integer
// in its shortest form. checkFrame has let through no other.
func echoedID(raw json.RawMessage) (json.RawMessage, bool) {
	if bytes.HasPrefix(raw, []byte(`"`)) {
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return nil, false
		}
		var buf bytes.Buffer // the SDK writes < > & in an id as they are
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		if enc.Encode(s) != nil {
			return nil, false
		}
		return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), true
	}
	n, err := strconv.ParseInt(string(raw), 10, 64)
	if err != nil {
		return nil, false
	}
	return strconv.AppendInt(nil, n, 10), true
}

// serveDirect runs the call as the SDK would run its tool handler, and writes the JSON-RPC
// response the SDK would write. The id goes in as echoedID wrote it: a JSON encoder would
// escape < > & in it, which the SDK does not; the result escapes them, as the SDK's does
// (toolAnswer.appendJSON).
func (h *Handler) serveDirect(ctx context.Context, w http.ResponseWriter, hdr http.Header, c directCall) {
	ans, err := h.callTool(ctx, c.tool, hdr, c.args)
	buf := answerBuffers.Get().(*bytes.Buffer)
	defer putAnswerBuffer(buf)
	buf.Reset()
	buf.WriteString(`{"jsonrpc":"2.0","id":`)
	buf.Write(c.id)
	if err != nil {
		encoded, _ := json.Marshal(err) // callTool's errors are *jsonrpc.Error
		buf.WriteString(`,"error":`)
		buf.Write(encoded)
	} else {
		buf.WriteString(`,"result":`)
		ans.writeJSON(buf)
	}
	buf.WriteByte('}')
	w.Header().Set("Cache-Control", "no-cache, no-transform")
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	w.Write(buf.Bytes()) // an http.ResponseWriter copies what it is given before Write returns
}

// answerBuffers are the buffers direct answers are written in; one grown past
// keptBufferBytes (a long thread read whole) is left to the collector.
var answerBuffers = sync.Pool{New: func() any { return new(bytes.Buffer) }}

const keptBufferBytes = 64 << 10

func putAnswerBuffer(buf *bytes.Buffer) {
	if buf.Cap() <= keptBufferBytes {
		answerBuffers.Put(buf)
	}
}
