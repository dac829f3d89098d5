package web

import (
	"fmt"
	"log/slog"
	"slices"

	"github.com/gofiber/fiber/v2"
	"github.com/valyala/fasthttp"
)

// refuseUnknownMethods answers a request whose method the router does not know — FOO,
// PROPFIND, a lowercase get (methods are case-sensitive, RFC 9110 § 9.1) — as the app's error
// handler answers any request it cannot read: 400 in the terms of its path (§ 9's
// invalid_body under /v1, a JSON-RPC error with it under /mcp, the forum's page elsewhere).
// Fiber answers such a request itself, in plain text, before any handler or the error
// handler runs; this stands in front of it.
//
// The request is logged and counted as every other is, as a request no route serves.
func refuseUnknownMethods(app *fiber.App, log *slog.Logger, m *Metrics) {
	server := app.Server()
	next := server.Handler
	known := app.Config().RequestMethods
	handle := app.Config().ErrorHandler
	server.Handler = func(fctx *fasthttp.RequestCtx) {
		if slices.Contains(known, string(fctx.Method())) {
			next(fctx)
			return
		}
		c := app.AcquireCtx(fctx)
		defer app.ReleaseCtx(c)
		c.Context().SetConnectionClose() // what else it sends is not read as a request
		ex := beginExchange(c)
		ex.operation = unmatched
		err := fiber.NewError(fiber.StatusBadRequest, fmt.Sprintf("%.32q is not a method this server serves (methods are case-sensitive: GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS)", fctx.Method()))
		if handle(c, err) != nil {
			_ = c.SendStatus(fiber.StatusBadRequest)
		}
		endExchange(c, ex, log, m)
	}
}
