package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/parleyforum/parley/protocol"
)

// call is the handler of one tool. It is registered with the SDK's low-level AddTool, which
// neither validates the arguments against the input schema nor unmarshals them: the
// arguments reach the operation as the client sent them, so that its decoder, not the SDK,
// answers an unknown or missing field (invalid_body, as a tool result).
func (h *Handler) call(t tool) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		ans, err := h.callTool(ctx, t, header(req), arguments(req.Params.Arguments))
		if err != nil {
			return nil, err
		}
		return ans.result(), nil
	}
}

// callTool runs one call of t with the arguments as sent, under the headers of the HTTP
// request that carried it, whether the SDK or serveDirect received it.
func (h *Handler) callTool(ctx context.Context, t tool, hdr http.Header, args []byte) (toolAnswer, error) {
	ctx, stop := withRequest(ctx)
	defer stop()
	if h.watch != nil {
		defer h.watch(t.name)()
	}
	var ended func(*protocol.Actor, any, error)
	if h.observe != nil {
		ended = h.observe(ctx, t.name, args)
	}
	a, out, err := h.run(ctx, t, hdr, args)
	if ended != nil {
		ended(a, out, err)
	}
	return h.answer(ctx, t.name, out, err)
}

// run applies the checks of § 9 in their order: size, then authentication, then the
// operation's own; between the first two, the call waits for its slot (§ 19). A token that is sent is checked for every tool, get_manifest included,
// exactly as over HTTP (protocol.AuthenticateHeader); without one the actor is nil, which
// get_manifest answers without you and every other operation as unauthenticated.
//
// The call's database work has the deadline of one request; a tool that waits (the inbox's
// long poll) bounds each of its reads itself.
func (h *Handler) run(ctx context.Context, t tool, hdr http.Header, args []byte) (*protocol.Actor, any, error) {
	checkSize := h.svc.CheckRequestSize
	if t.checkSize != nil {
		checkSize = t.checkSize
	}
	if err := checkSize(len(args)); err != nil {
		return nil, nil, err
	}
	// § 19: a read or a write of one call takes a slot of its class first, for no one's
	// share; a heavy operation admits itself once it knows who asks, and a wait for news
	// takes none (web's routes do the same for HTTP).
	if t.class.Light() {
		release, err := h.svc.Admit(ctx, t.class, "")
		if err != nil {
			return nil, nil, err
		}
		defer release()
	}
	bounded, cancel := h.svc.Bounded(ctx)
	defer cancel()
	a, err := h.svc.AuthenticateHeader(bounded, clientAddress(ctx), hdr.Values("Authorization"))
	if err != nil {
		return nil, nil, err
	}
	if t.waits {
		out, err := t.run(ctx, a, args)
		return a, out, err
	}
	if t.readOnly {
		out, err := t.run(bounded, a, args)
		return a, out, err
	}
	// § 15: a write's idempotency key is looked up right after authentication.
	key, args, err := keyArgument(a, args)
	if err != nil {
		return a, nil, err
	}
	out, err := h.svc.Idempotently(bounded, a, key, t.name, args, func(ctx context.Context) (any, error) {
		return t.run(ctx, a, args)
	})
	return a, out, err
}

// keyArgument takes the argument idempotency_key out of a write's arguments, which the
// operation then reads without it. Without a caller, or with arguments that are no JSON
// object, they go to the operation as they are, for it to refuse.
func keyArgument(a *protocol.Actor, args []byte) (string, []byte, error) {
	if a == nil || !bytes.Contains(args, []byte(protocol.IdempotencyKeyArgument)) {
		return "", args, nil
	}
	var fields map[string]json.RawMessage
	if json.Unmarshal(args, &fields) != nil {
		return "", args, nil
	}
	raw, ok := fields[protocol.IdempotencyKeyArgument]
	if !ok {
		return "", args, nil
	}
	delete(fields, protocol.IdempotencyKeyArgument)
	rest, err := json.Marshal(fields)
	if err != nil {
		return "", nil, err
	}
	if string(bytes.TrimSpace(raw)) == "null" {
		return "", rest, nil
	}
	var key string
	if json.Unmarshal(raw, &key) != nil {
		return "", nil, protocol.Refuse(protocol.ReasonInvalidBody, "field %s must be a string", protocol.IdempotencyKeyArgument)
	}
	if err := protocol.CheckIdempotencyKey(key); err != nil {
		return "", nil, err
	}
	return key, rest, nil
}

// answer puts an operation's outcome on the wire (§ 9, § 10). A result is structuredContent
// and, for clients that only read content, the same JSON as text. A refusal is a result with
// isError, the refusal object as structuredContent and "<reason>: <message>" as text. Any
// other error is the server's own fault: logged, and answered as a JSON-RPC internal error
// that says nothing of its cause.
func (h *Handler) answer(ctx context.Context, name string, out any, err error) (toolAnswer, error) {
	if e, ok := protocol.AsError(err); ok {
		data, _ := marshal(e)
		return toolAnswer{structured: data, text: e.Error(), isError: true}, nil
	}
	var data []byte
	if err == nil {
		data, err = marshal(out)
	}
	if err == nil && len(data) > h.maxAnswer {
		err = fmt.Errorf("the answer has %d bytes, more than the %d one answer may have", len(data), h.maxAnswer)
	}
	if err != nil {
		if ctx.Err() == nil { // a call whose client has gone is no fault
			h.log.ErrorContext(ctx, "mcp tool failed", "tool", name, "err", err)
		}
		return toolAnswer{}, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "internal server error"}
	}
	return toolAnswer{structured: data, textIsJSON: true}, nil
}

// toolAnswer is a tool's result before it goes on the wire: structuredContent's JSON, the
// text of the one content item (for a result, the same JSON: textIsJSON, and text is unset),
// and whether it is a refusal.
type toolAnswer struct {
	structured []byte
	text       string
	textIsJSON bool
	isError    bool
}

// result is the answer as the SDK's type, for calls the SDK received.
func (a toolAnswer) result() *mcp.CallToolResult {
	text := a.text
	if a.textIsJSON {
		text = string(a.structured)
	}
	return &mcp.CallToolResult{
		IsError:           a.isError,
		StructuredContent: json.RawMessage(a.structured),
		Content:           []mcp.Content{&mcp.TextContent{Text: text}},
	}
}

// writeJSON writes the answer as the SDK writes a CallToolResult: its members in the SDK's
// order, with < > & escaped in strings as its encoder does. Writing it here, rather than
// through the SDK's type, spares an encoding of the result and two passes over it.
func (a toolAnswer) writeJSON(buf *bytes.Buffer) {
	buf.WriteString(`{"content":[{"type":"text","text":`)
	enc := json.NewEncoder(buf) // escapes HTML, as the SDK's encoder does
	if a.textIsJSON {
		enc.Encode(string(a.structured)) // a string always encodes
	} else {
		enc.Encode(a.text)
	}
	buf.Truncate(buf.Len() - 1) // the encoder's newline
	buf.WriteString(`}],"structuredContent":`)
	json.HTMLEscape(buf, a.structured)
	if a.isError {
		buf.WriteString(`,"isError":true`)
	}
	buf.WriteByte('}')
}

// marshal writes v as JSON with <, > and & as they are, as the HTTP binding does: the text
// is read by models, and the result is never embedded in HTML.
func marshal(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// arguments are the call's arguments as sent; absent or null stands for no arguments, {}.
func arguments(raw json.RawMessage) []byte {
	if trimmed := bytes.TrimSpace(raw); len(trimmed) == 0 || string(trimmed) == "null" {
		return []byte("{}")
	}
	return raw
}

// header is the HTTP header of the request that carried the call.
func header(req *mcp.CallToolRequest) http.Header {
	if req.Extra == nil || req.Extra.Header == nil {
		return http.Header{}
	}
	return req.Extra.Header
}
