package mcpserver

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"reflect"
	"strconv"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/parleyforum/parley/protocol"
)

// The JSON-RPC frame of a request is checked here, before the SDK reads it, so that every
// fault of JSON-RPC itself is answered as a JSON-RPC error object (§ 9) in the caller's
// terms, never as plain text or with the name of a Go type:
//
//   - a body that is not JSON: -32700;
//   - a key that an object names twice, in the envelope, in params or at any depth of a
//     tool's arguments: -32600. Readers differ on which of the two counts (encoding/json
//     takes the last, others the first), and an idempotent write re-encodes its arguments;
//     one request must have one reading;
//   - a batch (an array): -32600, whatever MCP-Protocol-Version says. The SDK would run a
//     batch's calls concurrently and answer them all at once, so one small request could
//     demand hundreds of large answers; MCP left batching with 2025-06-18, and one call per
//     request is all Parley needs;
//   - an id the server cannot echo exactly (a fraction, or an integer beyond 2^53, which the
//     SDK would turn into another number): -32600;
//   - a method this server does not serve: -32601;
//   - params of the wrong shape for a method: -32602, naming the field in JSON terms;
//   - a notification the SDK does not take: nothing (202), as for any notification.

// frameFault is a JSON-RPC error to answer instead of handing the request to the SDK.
type frameFault struct {
	status int             // HTTP status
	id     json.RawMessage // echoed as sent; null when there is none to echo
	code   int64
	msg    string
}

// methods are the requests this server serves, each with the SDK's type of its params.
var methods = map[string]func() any{
	"initialize": func() any { return new(mcp.InitializeParams) },
	"ping":       func() any { return new(mcp.PingParams) },
	"tools/list": func() any { return new(mcp.ListToolsParams) },
	"tools/call": func() any { return new(mcp.CallToolParamsRaw) },
	// initialize advertises logging, so its one request is served (it changes nothing: the
	// server sends no log messages); the official Inspector sends it first.
	"logging/setLevel": func() any { return new(mcp.SetLoggingLevelParams) },
}

// notifications are the notifications the SDK takes; any other is answered like them, with
// nothing (202), since a notification gets no response.
var notifications = map[string]bool{
	"notifications/initialized": true, "notifications/cancelled": true,
	"notifications/roots/list_changed": true, "notifications/progress": true,
}

// frame is a request as JSON-RPC frames it; fields stay raw to be checked one by one.
type frame struct {
	JSONRPC, ID, Method, Params json.RawMessage
}

// readFrame reads the members of a request object by their exact names, as the SDK does:
// encoding/json would also take "Method" for method, another reading of the same request
// than the SDK's. A member that is absent stays nil; one that is null is "null".
func readFrame(body []byte) (frame, bool) {
	var members map[string]json.RawMessage
	if json.Unmarshal(body, &members) != nil {
		return frame{}, false
	}
	return frame{JSONRPC: members["jsonrpc"], ID: members["id"], Method: members["method"], Params: members["params"]}, true
}

// checkFrame returns the JSON-RPC error body answers with, or nil when the SDK may read it.
func checkFrame(body []byte) *frameFault {
	trimmed := bytes.TrimSpace(body)
	if !json.Valid(trimmed) {
		return &frameFault{http.StatusBadRequest, nil, jsonrpc.CodeParseError, "parse error: the body is not valid JSON"}
	}
	switch trimmed[0] {
	case '[':
		return invalidRequest(nil, "batches are not accepted: send one JSON-RPC request per HTTP request")
	case '{':
	default:
		return invalidRequest(nil, "the body must be one JSON-RPC request object")
	}
	f, ok := readFrame(trimmed)
	if !ok {
		return invalidRequest(nil, "the body must be one JSON-RPC request object")
	}
	if key, repeated := protocol.RepeatedKey(trimmed); repeated {
		var id json.RawMessage // echoed when it is not itself what is repeated
		if key != "id" && f.ID != nil && echoable(f.ID) {
			id = f.ID
		}
		return invalidRequest(id, "key "+key+" appears more than once: each key may appear once in an object")
	}
	if string(f.JSONRPC) != `"2.0"` {
		return invalidRequest(nil, `field jsonrpc must be "2.0"`)
	}
	if f.ID != nil && !echoable(f.ID) {
		return invalidRequest(nil, "field id must be a string or a whole number from -9007199254740991 to 9007199254740991")
	}
	var method string
	if json.Unmarshal(f.Method, &method) != nil {
		return invalidRequest(f.ID, "field method must be a string")
	}
	if f.ID == nil {
		if !notifications[method] {
			return &frameFault{status: http.StatusAccepted} // a notification is answered by nothing
		}
		return nil
	}
	if _, served := methods[method]; !served {
		return &frameFault{http.StatusOK, f.ID, jsonrpc.CodeMethodNotFound,
			"method " + strconv.Quote(method) + " is not served here; this server serves initialize, ping, tools/list, tools/call and logging/setLevel"}
	}
	return checkParams(f.ID, method, f.Params)
}

func invalidRequest(id json.RawMessage, msg string) *frameFault {
	return &frameFault{http.StatusBadRequest, id, jsonrpc.CodeInvalidRequest, "invalid request: " + msg}
}

// maxExactID is the largest integer id the SDK echoes exactly: it reads numeric ids through
// a float64, exact up to 2^53 - 1 (as in JavaScript, Number.MAX_SAFE_INTEGER).
const maxExactID = 1<<53 - 1

// echoable reports whether the SDK echoes id exactly: a string, or an integer within
// ±maxExactID written without fraction or exponent.
func echoable(id json.RawMessage) bool {
	text := string(id)
	if strings.HasPrefix(text, `"`) {
		return true
	}
	n, err := strconv.ParseInt(text, 10, 64)
	return err == nil && n >= -maxExactID && n <= maxExactID
}

// checkParams decodes params into the SDK's type for method, as the SDK will, and answers a
// mismatch in JSON terms (the SDK would name its Go types).
func checkParams(id json.RawMessage, method string, raw json.RawMessage) *frameFault {
	if raw == nil || string(raw) == "null" {
		if method == "tools/call" {
			return invalidParams(id, "tools/call needs params {name, arguments}")
		}
		return nil
	}
	if raw[0] != '{' {
		return invalidParams(id, "params must be an object")
	}
	err := json.Unmarshal(raw, methods[method]())
	var typeErr *json.UnmarshalTypeError
	if errors.As(err, &typeErr) {
		return invalidParams(id, "params."+typeErr.Field+" must be a JSON "+jsonKindOf(typeErr.Type)+", not a JSON "+typeErr.Value)
	}
	if err != nil {
		return invalidParams(id, "params cannot be read")
	}
	var named struct{ Name *string }
	if method == "tools/call" && (json.Unmarshal(raw, &named) != nil || named.Name == nil) {
		return invalidParams(id, "params.name is missing: the name of the tool to call")
	}
	return nil
}

// jsonKindOf names the JSON type a Go type is read from.
func jsonKindOf(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Struct, reflect.Map:
		return "object"
	case reflect.Slice, reflect.Array:
		return "array"
	case reflect.String:
		return "string"
	case reflect.Bool:
		return "boolean"
	}
	return "number"
}

func invalidParams(id json.RawMessage, msg string) *frameFault {
	return &frameFault{http.StatusOK, id, jsonrpc.CodeInvalidParams, "invalid params: " + msg}
}

// write answers the fault as a JSON-RPC error response (a notification's, as nothing).
func (f *frameFault) write(w http.ResponseWriter) {
	if f.code == 0 {
		w.WriteHeader(f.status)
		return
	}
	id := f.id
	if id == nil {
		id = json.RawMessage("null")
	}
	out, _ := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   *jsonrpc.Error  `json:"error"`
	}{"2.0", id, &jsonrpc.Error{Code: f.code, Message: f.msg}})
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(f.status)
	w.Write(out)
}
