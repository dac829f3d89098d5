package web

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"

	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/middleware/adaptor"

	"github.com/parleyforum/parley/protocol"
	"github.com/parleyforum/parley/protocol/mcpserver"
)

// registerMCP mounts the MCP transport (§ 10) at /mcp. The handler is the SDK's, on net/http;
// it answers every method itself (POST; 405 with Allow for the others), so it takes them all.
func registerMCP(rt *router, svc *protocol.Service, log *slog.Logger, m *Metrics, tools ...mcpserver.Tool) {
	h := netHTTP(mcpserver.New(svc, mcpserver.Options{Logger: log, Observe: observeTool(m), Tools: tools}))
	checkBody := mcpserver.CheckBodySize(svc.Limits())
	// Each call takes the slot of its tool's class, in the MCP handler (routes.go).
	rt.addByTool("/mcp", func(c *fiber.Ctx) error {
		exchangeOf(c).transport = transportMCP
		// The body is read as it arrives, bounded, before the handler takes it (body.go).
		if err := readBody(c, checkBody); err != nil {
			return mcpRefusal(c, err)
		}
		return h(c)
	})
}

// mcpRefusal answers at /mcp a refusal made before the MCP handler ran: a JSON-RPC error
// with the refusal of § 9 as its data, and its status.
func mcpRefusal(c *fiber.Ctx, err error) error {
	e, ok := protocol.AsError(err)
	if !ok {
		return err
	}
	if e.Status == 0 {
		e.Status = e.Reason.Status()
	}
	exchangeOf(c).refused(e)
	c.Set(fiber.HeaderContentType, fiber.MIMEApplicationJSON)
	c.Set(fiber.HeaderCacheControl, "no-store")
	return c.Status(e.Status).Send(mcpserver.HTTPError(e.Status, e.Error(), e))
}

// observeTool records each tool call in its request's exchange, and counts an inbox call
// that waits for news as a long-poll waiter while it waits.
func observeTool(m *Metrics) func(ctx context.Context, tool string, args []byte) func(*protocol.Actor, any, error) {
	return func(ctx context.Context, tool string, args []byte) func(*protocol.Actor, any, error) {
		stopWaiting := func() {}
		if tool == "inbox" && waitsForNews(args) {
			stopWaiting = m.waiting()
		}
		return func(a *protocol.Actor, out any, err error) {
			stopWaiting()
			if ex := exchangeFrom(ctx); ex != nil {
				ex.operation = tool
				ex.askedBy(a)
				ex.ended(out, err)
			}
		}
	}
}

// waitsForNews reports whether an inbox call's arguments ask it to wait. Arguments the
// operation will refuse do not wait, and their answer says so.
func waitsForNews(args []byte) bool {
	var in struct {
		WaitSeconds float64 `json:"wait_seconds"`
	}
	return json.Unmarshal(args, &in) == nil && in.WaitSeconds > 0
}

// netHTTP serves a net/http handler inside Fiber. The response is buffered, which MCP
// allows because the handler answers application/json, never an event stream. It does what
// fiber's adaptor does, with a request context of its own instead of the fasthttp.RequestCtx:
//
//   - It carries http.LocalAddrContextKey, as net/http's server sets it. Without it the
//     SDK's protection against DNS rebinding (a loopback listener refuses a foreign Host) is
//     silently off.
//   - It ends when the server shuts down, so that a long poll does not hold up a shutdown,
//     and when the client has closed its connection (whileClientWaits).
//   - It is not the RequestCtx, which fasthttp hands to the next request once this one is
//     answered, while the SDK may still hold the context it was given.
func netHTTP(h http.Handler) fiber.Handler {
	return func(c *fiber.Ctx) error {
		r, err := adaptor.ConvertRequest(c, true)
		if err != nil {
			return fiber.NewError(fiber.StatusBadRequest, "the request cannot be read")
		}
		// The conversion keeps one value of each header; the operation layer must see every
		// Authorization header to refuse more than one.
		if values := authorizationHeaders(c); len(values) > 0 {
			r.Header[fiber.HeaderAuthorization] = values
		}
		ctx := context.WithValue(context.Background(), http.LocalAddrContextKey, c.Context().LocalAddr())
		ctx = context.WithValue(ctx, exchangeKey{}, exchangeOf(c)) // for the logs' request id, and observeTool
		ctx, cancel := whileClientWaits(mcpserver.WithClientAddress(ctx, clientAddress(c)), c)
		defer cancel()

		w := &responseWriter{header: http.Header{}, c: c, status: http.StatusOK}
		h.ServeHTTP(w, r.WithContext(ctx))
		for name, values := range w.header {
			for _, v := range values {
				c.Response().Header.Add(name, v)
			}
		}
		c.Status(w.status)
		return nil
	}
}

// responseWriter writes a net/http handler's answer into Fiber's response; the status and
// headers are set when the handler returns.
type responseWriter struct {
	header      http.Header
	c           *fiber.Ctx
	status      int // 200 unless the handler says otherwise
	wroteHeader bool
}

func (w *responseWriter) Header() http.Header { return w.header }

func (w *responseWriter) WriteHeader(status int) {
	if !w.wroteHeader {
		w.status, w.wroteHeader = status, true
	}
}

func (w *responseWriter) Write(p []byte) (int, error) {
	w.WriteHeader(http.StatusOK)
	w.c.Response().AppendBody(p)
	return len(p), nil
}
