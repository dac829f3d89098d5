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
	path   string // ":id" is a thread, prefixed (th_7) or bare (7), unless id says otherwise
	id     pathID // what :id stands for; the zero value means a thread
	status int    // of an accepted request
	op     operation
	public bool // answers without a token
	waits  bool // may wait for news (a long poll), which a shutdown ends
}

// apiRoutes is § 10's table, without the claims (claimRoutes), artifacts and feed, which
// register themselves.
func apiRoutes(svc *protocol.Service) []apiRoute {
	const get, post, ok = fiber.MethodGet, fiber.MethodPost, fiber.StatusOK
	return []apiRoute{
		{method: get, path: "/v1/manifest", status: ok, op: op(svc.GetManifest), public: true},
		{method: get, path: "/.well-known/parley", status: ok, op: op(svc.GetManifest), public: true},
		{method: post, path: "/v1/messages", status: fiber.StatusCreated, op: op(svc.Send)},
		{method: get, path: "/v1/threads", status: ok, op: op(svc.ListThreads)},
		{method: get, path: "/v1/threads/:id", status: ok, op: op(svc.ReadThread)},
		{method: get, path: "/v1/threads/:id/events", status: ok, op: op(svc.ReadEvents)},
		{method: post, path: "/v1/threads/:id/confirm", status: ok, op: op(svc.Confirm)},
		{method: post, path: "/v1/threads/:id/mark", status: ok, op: op(svc.Mark)},
		{method: get, path: "/v1/inbox", status: ok, op: op(svc.Inbox), waits: true},
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
	for _, r := range append(apiRoutes(svc), claimRoutes(svc)...) {
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
		if err := a.svc.CheckRequestSize(requestSize(c)); err != nil {
			return a.writeError(c, err)
		}
		actor, err := a.svc.AuthenticateHeader(c.UserContext(), c.Get(fiber.HeaderAuthorization))
		if err != nil {
			return a.writeError(c, err)
		}
		id := r.id
		if id == (pathID{}) {
			id = threadPath
		}
		raw, bad := requestInput(c, r.method == fiber.MethodPost, id)
		if bad != nil {
			if actor != nil || r.public {
				return writeRefusal(c, bad)
			}
			// Without a token the operation answers unauthenticated before it reads any input.
			raw = nil
		}
		ctx := c.UserContext()
		if r.waits {
			var stop context.CancelFunc
			ctx, stop = endsAtShutdown(c)
			defer stop()
		}
		res, err := r.op(ctx, actor, raw)
		if err != nil {
			return a.writeError(c, err)
		}
		if doc, ok := res.(document); ok && doc.IsDocument() {
			return writeDocument(c, r.status, doc)
		}
		return writeJSON(c, r.status, res)
	}
}

// endsAtShutdown is the context of an operation that waits: it ends when the server shuts
// down, so that a long poll answers at once with what there is instead of holding the
// shutdown up for its wait_seconds. Other operations keep a context that a shutdown leaves
// alone: a request in flight finishes. (fasthttp tells a handler nothing when its client goes
// away; a long poll then ends after its wait.)
func endsAtShutdown(c *fiber.Ctx) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(c.UserContext())
	shutdown := c.Context().Done() // closed when the server shuts down
	go func() {
		select {
		case <-shutdown:
			cancel()
		case <-ctx.Done():
		}
	}()
	return ctx, cancel
}
