package web

import (
	"bytes"
	"encoding/json"
	"errors"
	"log/slog"
	"strconv"
	"strings"
	"sync"

	"github.com/gofiber/fiber/v2"

	"github.com/parleyforum/parley/protocol"
)

// How the HTTP binding answers: JSON in UTF-8, refusals as § 9's object with its status.

// answersAsAPI reports whether the app's error handler answers err as a refusal of the HTTP
// binding, in JSON rather than as text: on the binding's paths, and for what the server
// refuses while it reads a request it has discarded, path and all — headers too large (431),
// a request not received in time (408), a chunked body that overflows (413). Its path is not
// known then; it may have been under /v1, and every answer there is JSON.
func answersAsAPI(c *fiber.Ctx, err error) bool {
	path := requestPath(c)
	if isAPIPath(path) {
		return true
	}
	var fe *fiber.Error
	return discarded(c) && !isMCPPath(path) && errors.As(err, &fe) && fe.Code < fiber.StatusInternalServerError
}

// discarded reports whether the server refused the request while it read it, and dropped
// what it had read: its headers, its path.
func discarded(c *fiber.Ctx) bool { return len(c.Request().Header.RawHeaders()) == 0 }

// refusedWhileRead reports whether the HTTP server refused the request while it read it,
// before the app's first handler: too large, not received in time, or against a rule of HTTP
// (a Host that is no host, two Content-Length headers). Every request the app's handlers see
// passes observeExchanges first, which records its exchange.
func refusedWhileRead(c *fiber.Ctx) bool {
	_, seen := c.Locals(exchangeKey{}).(*exchange)
	return !seen
}

// requestPath is the request's path; for a discarded request, the path on its request line
// as the connection saw it (web.Listener keeps a request's first bytes), "" when unknown.
func requestPath(c *fiber.Ctx) string {
	if !discarded(c) {
		return c.Path()
	}
	if conn, ok := c.Context().Conn().(*gracefulConn); ok {
		return conn.requestPath()
	}
	return ""
}

// isAPIPath reports whether a request path belongs to the HTTP binding. Routing ignores case,
// so this does too.
func isAPIPath(path string) bool {
	p := strings.ToLower(path)
	return p == "/v1" || strings.HasPrefix(p, "/v1/") || strings.TrimSuffix(p, "/") == "/.well-known/parley"
}

// writeJSON answers v as JSON. Answers are never cached: most depend on the token, and all of
// them on the moment. HTML characters stay as they are (no \u003c): the content type is JSON
// and nosniff keeps browsers from reading it as anything else.
func writeJSON(c *fiber.Ctx, status int, v any) error {
	buf := jsonBuffers.Get().(*bytes.Buffer)
	defer putJSONBuffer(buf)
	enc := json.NewEncoder(buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return err
	}
	c.Set(fiber.HeaderContentType, fiber.MIMEApplicationJSONCharsetUTF8)
	c.Set(fiber.HeaderCacheControl, "no-store")
	c.Set(fiber.HeaderXContentTypeOptions, "nosniff")
	// SetBody copies the bytes into the response's own buffer (Send would keep buf itself), so
	// buf is free again once it returns.
	c.Status(status).Response().SetBody(buf.Bytes())
	return nil
}

// jsonBuffers keeps writeJSON's buffers from one answer to the next.
var jsonBuffers = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// putJSONBuffer returns a buffer to jsonBuffers, unless an answer grew it large: one long
// thread must not keep its memory in the pool.
func putJSONBuffer(buf *bytes.Buffer) {
	if buf.Cap() > 64<<10 {
		return
	}
	buf.Reset()
	jsonBuffers.Put(buf)
}

// writeRefusal answers a refusal of § 9: its object, with its status; for 429 the seconds to
// wait also as Retry-After, for 503 the seconds to wait before a retry, and for 401 the
// scheme to use (RFC 9110 § 11.6.1).
func writeRefusal(c *fiber.Ctx, e *protocol.Error) error {
	if e.Status == 0 {
		e.Status = e.Reason.Status()
	}
	exchangeOf(c).refused(e)
	switch {
	case e.RetryAfter > 0:
		c.Set(fiber.HeaderRetryAfter, strconv.Itoa(e.RetryAfter))
	case e.Status == fiber.StatusServiceUnavailable && e.RetryHint > 0:
		c.Set(fiber.HeaderRetryAfter, strconv.Itoa(e.RetryHint))
	case e.Status == fiber.StatusServiceUnavailable:
		c.Set(fiber.HeaderRetryAfter, strconv.Itoa(protocol.UnavailableRetryAfter))
	}
	if e.Status == fiber.StatusUnauthorized {
		c.Set(fiber.HeaderWWWAuthenticate, `Bearer realm="parley"`)
	}
	return writeJSON(c, e.Status, e)
}

// internalFault is the whole answer to a fault of the server: what went wrong is logged,
// never sent, so that no SQL, path or secret reaches a client.
var internalFault = struct {
	Reason  string `json:"reason"`
	Message string `json:"message"`
	Status  int    `json:"status"`
}{"internal", "the server failed to answer; the fault is logged", fiber.StatusInternalServerError}

// writeError answers what an operation returned: a refusal as itself, anything else as a
// fault of the server.
func (a *api) writeError(c *fiber.Ctx, err error) error {
	return writeAPIError(c, err, a.log)
}

func writeAPIError(c *fiber.Ctx, err error, log *slog.Logger) error {
	if e, ok := protocol.AsError(err); ok {
		return writeRefusal(c, e)
	}
	log.ErrorContext(c.UserContext(), "request failed", "method", c.Method(), "path", c.Path(), "err", err)
	exchangeOf(c).reason = reasonInternal
	return writeJSON(c, fiber.StatusInternalServerError, internalFault)
}

// methodNotAllowed answers a method a path does not serve: 405 with the methods it does in
// Allow. The reason is not_found — the operation asked for does not exist — and the status
// the HTTP one, 405; the only answer of the binding whose status differs from its reason's.
func methodNotAllowed(allow string) fiber.Handler {
	return func(c *fiber.Ctx) error {
		exchangeOf(c).transport = transportHTTP
		c.Set(fiber.HeaderAllow, allow)
		return writeRefusal(c, wrongMethod(c))
	}
}

func wrongMethod(c *fiber.Ctx) *protocol.Error {
	e := protocol.Refuse(protocol.ReasonNotFound, "%s is not a method of %s", c.Method(), c.Path())
	e.Status = fiber.StatusMethodNotAllowed
	return e
}

// apiErrorAnswer answers, as a refusal, an error that reached the app's error handler on an
// API path: a route that does not exist, a method a path does not serve, and what the server
// refuses while it reads a request — above all a body over the largest it reads at all, which
// must come out as the same payload_too_large as the routes' own size check.
func apiErrorAnswer(c *fiber.Ctx, err error, log *slog.Logger) error {
	exchangeOf(c).transport = transportHTTP
	var fe *fiber.Error
	if !errors.As(err, &fe) {
		return writeAPIError(c, err, log)
	}
	switch {
	case fe.Code == fiber.StatusNotFound:
		exchangeOf(c).operation = unmatched
		return writeRefusal(c, protocol.Refuse(protocol.ReasonNotFound, "there is no route %s %s", c.Method(), c.Path()))
	case fe.Code == fiber.StatusMethodNotAllowed:
		return writeRefusal(c, wrongMethod(c))
	case fe.Code == fiber.StatusRequestEntityTooLarge, fe.Code == fiber.StatusRequestHeaderFieldsTooLarge:
		return writeRefusal(c, protocol.Refuse(protocol.ReasonPayloadTooLarge,
			"the request is larger than its byte limit (limits.request_max_bytes; for artifacts limits.artifact_max_bytes)"))
	case fe.Code == fiber.StatusRequestTimeout:
		e := protocol.Refuse(protocol.ReasonInvalidBody, "the request was not received within the server's read timeout")
		e.Status = fiber.StatusRequestTimeout
		return writeRefusal(c, e)
	case fe.Code < fiber.StatusInternalServerError:
		return writeRefusal(c, protocol.Refuse(protocol.ReasonInvalidBody, "the request cannot be read: %s", fe.Message))
	}
	return writeAPIError(c, err, log)
}
