package mcpserver

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// The JSON-RPC frame of a request is checked here, before the SDK reads it, so that every
// fault of JSON-RPC itself is answered as a JSON-RPC error object (§ 9) in the caller's
// terms, never as plain text or with the name of a Go type:
//
//   - a body that is not JSON: -32700;
//   - a batch (an array): -32600, whatever MCP-Protocol-Version says. The SDK would run a
//     batch's calls concurrently and answer them all at once, so one small request could
//     demand hundreds of large answers; MCP left batching with 2025-06-18, and one call per
//     request is all Parley needs;
//   - an id the server cannot echo exactly (a fraction, or an integer beyond 2^53, which the
//     SDK would turn into another number): -32600;
//   - a method this server does not serve: -32601;
//   - params of the wrong shape for initialize or tools/call: -32602, naming the field.

// frameFault is a JSON-RPC error to answer instead of handing the request to the SDK.
type frameFault struct {
	status int             // HTTP status
	id     json.RawMessage // echoed as sent; null when there is none to echo
	code   int64
	msg    string
}

// methods are the requests this server serves; notifications (no id) pass to the SDK.
var methods = map[string]bool{"initialize": true, "ping": true, "tools/list": true, "tools/call": true}

// paramKinds are, per method, the JSON type of each params field the SDK decodes into a Go
// type: a wrong type there would come back as a message about that type.
var paramKinds = map[string]map[string]string{
	"initialize": {"protocolVersion": "string", "capabilities": "object", "clientInfo": "object", "_meta": "object"},
	"tools/call": {"name": "string", "_meta": "object"}, // arguments: any JSON, the operation answers
	"tools/list": {"cursor": "string", "_meta": "object"},
	"ping":       {"_meta": "object"},
}

// frame is a request as JSON-RPC frames it; fields stay raw to be checked one by one.
type frame struct {
	JSONRPC json.RawMessage `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  json.RawMessage `json:"method"`
	Params  json.RawMessage `json:"params"`
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
	var f frame
	if err := json.Unmarshal(trimmed, &f); err != nil {
		return invalidRequest(nil, "the body must be one JSON-RPC request object")
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
		return nil // a notification: answered by nothing, so left to the SDK
	}
	if !methods[method] {
		return &frameFault{http.StatusOK, f.ID, jsonrpc.CodeMethodNotFound,
			"method " + strconv.Quote(method) + " is not served here; this server serves initialize, ping, tools/list and tools/call"}
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

// checkParams checks that params is an object and that the fields the SDK decodes have
// their JSON types.
func checkParams(id json.RawMessage, method string, raw json.RawMessage) *frameFault {
	if raw == nil || string(raw) == "null" {
		if method == "tools/call" {
			return invalidParams(id, "tools/call needs params {name, arguments}")
		}
		return nil
	}
	var fields map[string]json.RawMessage
	if json.Unmarshal(raw, &fields) != nil {
		return invalidParams(id, "params must be an object")
	}
	if _, named := fields["name"]; method == "tools/call" && !named {
		return invalidParams(id, "params.name is missing: the name of the tool to call")
	}
	for field, want := range paramKinds[method] {
		v, ok := fields[field]
		if !ok || string(v) == "null" {
			continue
		}
		if got := jsonKind(v); got != want {
			return invalidParams(id, "params."+field+" must be a JSON "+want+", not "+got)
		}
	}
	return nil
}

func invalidParams(id json.RawMessage, msg string) *frameFault {
	return &frameFault{http.StatusOK, id, jsonrpc.CodeInvalidParams, "invalid params: " + msg}
}

// jsonKind names the JSON type of a valid value.
func jsonKind(v json.RawMessage) string {
	switch v[0] {
	case '{':
		return "object"
	case '[':
		return "array"
	case '"':
		return "string"
	case 't', 'f':
		return "boolean"
	case 'n':
		return "null"
	}
	return "number"
}

// write answers the fault as a JSON-RPC error response.
func (f *frameFault) write(w http.ResponseWriter) {
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
