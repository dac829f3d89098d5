package web

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"log/slog"
	"strconv"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/parleyforum/parley/protocol"
)

// An exchange is one request and its answer as the operator sees it: its id, what it asked
// for, who asked and how it was answered. Handlers fill it in as they learn these things;
// when the answer is written, observeExchanges logs it in one line and counts it.
type exchange struct {
	id        string
	start     time.Time
	transport string // "http" (the /v1 binding), "mcp", or "web" for everything else
	operation string // the route ("POST /v1/messages"), or the MCP tool
	identity  string // who asked, when a token said so
	reason    string // a refusal's reason (§ 9), or "internal" for a fault of the server
	wrote     string // the kind (or act) of an accepted write
}

// Transports, as the logs and metrics name them.
const (
	transportHTTP = "http"
	transportMCP  = "mcp"
	transportWeb  = "web"
)

// reasonInternal marks an answer that was the server's fault.
const reasonInternal = "internal"

type exchangeKey struct{}

// exchangeOf is the request's exchange. Outside observeExchanges (in tests of single
// handlers) it is a fresh one that nobody reads.
func exchangeOf(c *fiber.Ctx) *exchange {
	if ex, ok := c.Locals(exchangeKey{}).(*exchange); ok {
		return ex
	}
	return &exchange{}
}

// exchangeFrom is the exchange a context carries, nil for none.
func exchangeFrom(ctx context.Context) *exchange {
	ex, _ := ctx.Value(exchangeKey{}).(*exchange)
	return ex
}

// refused records what a refusal of the operation layer says.
func (ex *exchange) refused(e *protocol.Error) { ex.reason = string(e.Reason) }

// askedBy records who asked: the identity of the token, if any.
func (ex *exchange) askedBy(a *protocol.Actor) {
	if a != nil {
		ex.identity = a.Identity
	}
}

// ended records how the operation ended: what it wrote when it was accepted, its reason when
// it was refused, or a fault of the server.
func (ex *exchange) ended(out any, err error) {
	if err != nil {
		if e, ok := protocol.AsError(err); ok {
			ex.refused(e)
		} else {
			ex.reason = reasonInternal
		}
		return
	}
	switch r := out.(type) {
	case *protocol.SendResult:
		ex.wrote = string(r.Message.Kind)
	case *protocol.ModerationResult:
		if r.Event != nil { // a move into the room the thread is in writes none
			ex.wrote = r.Event.Act
		}
	}
}

// outcome is the exchange's result as a metric label: ok, a refusal's reason, internal, or
// for what is not an operation (pages, static files) the HTTP status of a failure.
func (ex *exchange) outcome(status int) string {
	switch {
	case ex.reason != "":
		return ex.reason
	case status >= fiber.StatusInternalServerError:
		return reasonInternal
	case status >= fiber.StatusBadRequest:
		return strconv.Itoa(status)
	}
	return "ok"
}

// maxRequestID bounds an X-Request-Id taken from a client: longer ones, and any with
// characters outside printable ASCII, are replaced by one of our own.
const maxRequestID = 128

// requestID is the id a request is known by in the logs: the one the client (or the proxy in
// front) sent in X-Request-Id, or a new one.
func requestID(c *fiber.Ctx) string {
	if id := c.Get(fiber.HeaderXRequestID); id != "" && len(id) <= maxRequestID && printable(id) {
		return id
	}
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

func printable(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] <= ' ' || s[i] > '~' {
			return false
		}
	}
	return true
}

// observeExchanges gives every request an exchange and a request id (answered in
// X-Request-Id), and when the answer is written, logs its access line and counts it. It runs
// before every other handler (only the client address is found before it), so that it sees
// the final answer: an error a handler returned is answered here, by the app's error handler,
// before the line is written.
func observeExchanges(log *slog.Logger, m *Metrics) fiber.Handler {
	return func(c *fiber.Ctx) error {
		ex := beginExchange(c)
		if err := c.Next(); err != nil {
			if err := c.App().ErrorHandler(c, err); err != nil {
				_ = c.SendStatus(fiber.StatusInternalServerError)
			}
		}
		endExchange(c, ex, log, m)
		return nil
	}
}

// beginExchange gives c its exchange.
func beginExchange(c *fiber.Ctx) *exchange {
	ex := &exchange{id: requestID(c), start: time.Now(), transport: transportWeb}
	c.Locals(exchangeKey{}, ex)
	c.SetUserContext(context.WithValue(c.UserContext(), exchangeKey{}, ex))
	c.Set(fiber.HeaderXRequestID, ex.id)
	return ex
}

// endExchange logs and counts the exchange of c, answered.
func endExchange(c *fiber.Ctx, ex *exchange, log *slog.Logger, m *Metrics) {
	status := c.Response().StatusCode()
	route := c.Method() + " " + c.Route().Path
	if ex.operation == "" {
		ex.operation = route
	}
	elapsed := time.Since(ex.start)
	m.observe(ex, ex.outcome(status), elapsed)
	log.LogAttrs(c.UserContext(), slog.LevelInfo, "request",
		slog.String("method", c.Method()),
		slog.String("route", route),
		slog.String("transport", ex.transport),
		slog.String("operation", ex.operation),
		slog.Int("status", status),
		slog.String("reason", ex.reason),
		slog.Float64("duration_ms", float64(elapsed.Microseconds())/1000),
		slog.String("identity", ex.identity),
		slog.String("client", clientAddress(c)),
	)
}

// withRequestIDs is a log handler that adds the request id to every line logged with the
// context of a request, so that the lines of one request can be found together.
type withRequestIDs struct{ slog.Handler }

func (h withRequestIDs) Handle(ctx context.Context, r slog.Record) error {
	if ex := exchangeFrom(ctx); ex != nil {
		r.AddAttrs(slog.String("request_id", ex.id))
	}
	return h.Handler.Handle(ctx, r)
}

func (h withRequestIDs) WithAttrs(attrs []slog.Attr) slog.Handler {
	return withRequestIDs{h.Handler.WithAttrs(attrs)}
}

func (h withRequestIDs) WithGroup(name string) slog.Handler {
	return withRequestIDs{h.Handler.WithGroup(name)}
}
