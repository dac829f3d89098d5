package web

import (
	"context"
	"log/slog"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/parleyforum/parley/protocol"
)

// The HTTP binding /v1 of PROTOCOL.md § 10. Each route turns its request into the JSON input
// object of one operation and the operation's answer into JSON; every decision is the
// operation layer's, so that HTTP and MCP answer the same request alike.

// operation is one call of the operation layer, its result type erased.
type operation func(ctx context.Context, a *protocol.Actor, raw []byte) (any, error)

// op adapts an operation of protocol.Service.
func op[T any](f func(context.Context, *protocol.Actor, []byte) (*T, error)) operation {
	return func(ctx context.Context, a *protocol.Actor, raw []byte) (any, error) { return f(ctx, a, raw) }
}

// apiRoute is one row of § 10's table of HTTP routes.
type apiRoute struct {
	method string
	path   string // ":id" is a thread, prefixed (th_7) or bare (7)
	status int    // of an accepted request
	op     operation
}

// apiRoutes is § 10's table, without the claims, artifacts and feed, which register
// themselves.
func apiRoutes(svc *protocol.Service) []apiRoute {
	manifest := func(_ context.Context, a *protocol.Actor, _ []byte) (any, error) { return svc.Manifest(a), nil }
	return []apiRoute{
		{fiber.MethodGet, "/v1/manifest", fiber.StatusOK, manifest},
		{fiber.MethodGet, "/.well-known/parley", fiber.StatusOK, manifest},
		{fiber.MethodPost, "/v1/messages", fiber.StatusCreated, op(svc.Send)},
		{fiber.MethodGet, "/v1/threads", fiber.StatusOK, op(svc.ListThreads)},
		{fiber.MethodGet, "/v1/threads/:id", fiber.StatusOK, op(svc.ReadThread)},
		{fiber.MethodGet, "/v1/threads/:id/events", fiber.StatusOK, op(svc.ReadEvents)},
		{fiber.MethodPost, "/v1/threads/:id/confirm", fiber.StatusOK, op(svc.Confirm)},
		{fiber.MethodPost, "/v1/threads/:id/mark", fiber.StatusOK, op(svc.Mark)},
		{fiber.MethodGet, "/v1/inbox", fiber.StatusOK, op(svc.Inbox)},
	}
}

// api is the binding's state: the operation layer and where faults are logged.
type api struct {
	svc *protocol.Service
	log *slog.Logger
}

// registerAPI adds the routes of § 10 to app. Every path also answers the methods it does not
// serve, with 405 and an Allow header, so that a wrong method is told what would be right.
func registerAPI(app *fiber.App, svc *protocol.Service, log *slog.Logger) {
	a := &api{svc: svc, log: log}
	var paths []string
	allow := map[string][]string{}
	for _, r := range apiRoutes(svc) {
		h := a.handler(r)
		app.Add(r.method, r.path, h)
		if _, seen := allow[r.path]; !seen {
			paths = append(paths, r.path)
		}
		allow[r.path] = append(allow[r.path], r.method)
		if r.method == fiber.MethodGet {
			app.Add(fiber.MethodHead, r.path, h)
			allow[r.path] = append(allow[r.path], fiber.MethodHead)
		}
	}
	for _, p := range paths {
		app.All(p, methodNotAllowed(strings.Join(allow[p], ", ")))
	}
}

// handler runs one route in the order of § 9: the request's size, then the token, then the
// input, then whatever the operation checks.
func (a *api) handler(r apiRoute) fiber.Handler {
	return func(c *fiber.Ctx) error {
		if e := checkRequestSize(c, a.svc.Limits().RequestMaxBytes); e != nil {
			return writeRefusal(c, e)
		}
		actor, err := a.authenticate(c)
		if err != nil {
			return a.writeError(c, err)
		}
		raw, bad := requestInput(c, r.method == fiber.MethodPost)
		if bad != nil {
			if actor != nil {
				return writeRefusal(c, bad)
			}
			// Without a token the operation answers unauthenticated before it reads any input.
			raw = nil
		}
		res, err := r.op(c.UserContext(), actor, raw)
		if err != nil {
			return a.writeError(c, err)
		}
		return writeJSON(c, r.status, res)
	}
}
