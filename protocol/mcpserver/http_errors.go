package mcpserver

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/parleyforum/parley/protocol"
)

// Every answer at /mcp is a JSON-RPC response, those refused before JSON-RPC is read
// included: a method other than POST (405), a Content-Type that is not JSON (415), an Accept
// without JSON and an event stream (400), a foreign Host on a loopback listener (403), a body
// too large (413). The SDK answers those in plain text; a client that reads JSON-RPC would
// find nothing it can read. Their HTTP status stays as it is.

// HTTPError is the JSON-RPC error response, id null, to a request refused at the level of
// HTTP with status: -32600 (Invalid Request) for a fault of the request, -32603 for one of
// the server. refusal, when given, is the refusal of § 9 it amounts to, as the error's data.
func HTTPError(status int, message string, refusal *protocol.Error) []byte {
	var code int64 = jsonrpc.CodeInvalidRequest
	if status >= http.StatusInternalServerError {
		code = jsonrpc.CodeInternalError
	}
	e := &jsonrpc.Error{Code: code, Message: message}
	if refusal != nil {
		e.Data, _ = json.Marshal(refusal)
	}
	out, _ := json.Marshal(struct {
		JSONRPC string         `json:"jsonrpc"`
		ID      any            `json:"id"`
		Error   *jsonrpc.Error `json:"error"`
	}{"2.0", nil, e})
	return out
}

// forbiddenHost is the message of the SDK's one 403 in a stateless server: a Host that is not
// loopback on a loopback listener, which protects a local server from DNS rebinding.
const forbiddenHost = "the Host header must name a loopback address (localhost, 127.0.0.1, [::1]): this server listens on loopback"

// maxPlainText bounds what is kept of a plain-text answer to put in the JSON-RPC error.
const maxPlainText = 256

// jsonRPCErrors hands the SDK a ResponseWriter that turns each of its plain-text error
// answers into a JSON-RPC error with the same status and the same words. finish writes it
// once the SDK has returned.
type jsonRPCErrors struct {
	http.ResponseWriter
	status int          // the status of a plain-text error held back; 0 when none
	text   bytes.Buffer // its first maxPlainText bytes
}

func (w *jsonRPCErrors) WriteHeader(status int) {
	if w.status != 0 {
		return
	}
	if status >= http.StatusBadRequest && strings.HasPrefix(w.Header().Get("Content-Type"), "text/plain") {
		w.status = status
		return
	}
	w.ResponseWriter.WriteHeader(status)
}

func (w *jsonRPCErrors) Write(p []byte) (int, error) {
	if w.status == 0 {
		return w.ResponseWriter.Write(p)
	}
	if room := maxPlainText - w.text.Len(); room > 0 {
		w.text.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}

// Unwrap lets http.ResponseController reach the writer underneath.
func (w *jsonRPCErrors) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// finish writes the JSON-RPC error of a plain-text answer held back.
func (w *jsonRPCErrors) finish() {
	if w.status == 0 {
		return
	}
	text := strings.ToValidUTF8(strings.TrimSpace(w.text.String()), string(utf8.RuneError))
	switch {
	case w.status == http.StatusForbidden:
		text = forbiddenHost // the SDK's text quotes the Host sent
	case text == "":
		text = http.StatusText(w.status)
	}
	w.Header().Del("Content-Length")
	w.Header().Set("Content-Type", "application/json")
	w.ResponseWriter.WriteHeader(w.status)
	w.ResponseWriter.Write(HTTPError(w.status, text, nil))
}
