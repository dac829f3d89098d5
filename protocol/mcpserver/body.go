package mcpserver

import (
	"bytes"
	"errors"
	"io"
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/parleyforum/parley/protocol"
)

// frameBytes is what a JSON-RPC request may carry around a tool's arguments: the method,
// the id, the tool name and the per-request _meta of newer protocol versions.
const frameBytes = 8 << 10

// maxBody is the most the server reads of one MCP request: the largest input any operation
// takes (request_max_bytes, or artifact_put's base64 of artifact_max_bytes) and its frame. A call whose
// arguments are over request_max_bytes is read and refused by the tool (payload_too_large as
// a tool result, the shape § 9 asks for, under the id of the call); only a body over this
// bound, which nothing could accept, is refused here, unread.
func maxBody(svc *protocol.Service) int64 { return MaxBody(svc.Limits()) }

// MaxBody is maxBody under the limits l, for a server that bounds the bodies it reads.
func MaxBody(l protocol.Limits) int64 {
	return int64(max(l.RequestMaxBytes, protocol.ArtifactInputMaxBytes(l))) + frameBytes
}

// readBody reads the whole body of a POST up to maxBody, puts it back for the SDK and returns
// it (nil for other methods, which the SDK answers with 405). A larger body is refused with
// 413 and a JSON-RPC error whose data is the refusal object. Its id is null: the request's
// own id may stand in the part that is not read.
func (h *Handler) readBody(w http.ResponseWriter, r *http.Request) ([]byte, bool) {
	if r.Body == nil || r.Method != http.MethodPost {
		return nil, true
	}
	if r.ContentLength > h.maxBody {
		h.refuseBody(w)
		return nil, false
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, h.maxBody))
	var tooLarge *http.MaxBytesError
	switch {
	case errors.As(err, &tooLarge):
		h.refuseBody(w)
		return nil, false
	case err != nil:
		(&frameFault{http.StatusBadRequest, nil, jsonrpc.CodeParseError, "parse error: the request body could not be read"}).write(w)
		return nil, false
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	return body, true
}

// CheckBodySize is the check of a body of n bytes against what the handler reads at all
// under the limits l (MaxBody), for a server that reads the body before the handler does:
// the refusal the handler itself gives a body over it.
func CheckBodySize(l protocol.Limits) func(n int) error {
	limit := MaxBody(l)
	return func(n int) error {
		if int64(n) > limit {
			return bodyTooLarge(limit)
		}
		return nil
	}
}

func bodyTooLarge(limit int64) *protocol.Error {
	return protocol.Refuse(protocol.ReasonPayloadTooLarge,
		"the MCP request has more than %d bytes, the most this server reads of one request", limit)
}

func (h *Handler) refuseBody(w http.ResponseWriter) {
	refusal := bodyTooLarge(h.maxBody)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusRequestEntityTooLarge)
	w.Write(HTTPError(http.StatusRequestEntityTooLarge, refusal.Error(), refusal))
}
