package web

import (
	"context"
	"log/slog"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/parleyforum/parley/protocol"
	"github.com/parleyforum/parley/protocol/admission"
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
	// class is the route's admission class (§ 19, routes.go): Read or Write for a route
	// of one page, Listen for one that waits for news, a heavy class for one its handler
	// admits itself.
	class  admission.Class
	method string
	path   string // ":id" is a thread, prefixed (th_7) or bare (7), unless id says otherwise
	id     pathID // what :id stands for; the zero value means a thread
	status int    // of an accepted request
	op     operation
	public bool // answers without a token
	waits  bool // may wait for news (a long poll), which a shutdown ends
	// name is the operation's name, the same over MCP (its tool's name), under which a write
	// remembers its idempotency key (§ 15). Every route that is not a GET is a write and takes
	// an Idempotency-Key; one without a name is known by its method and path. Writes that MCP
	// has too are named after their tool, so that a retry over either transport is the same.
	name string
	// streamed: the body may be as large as an import's (protocol.CheckImportSize), not only
	// request_max_bytes, and is read as a stream once the caller is known (readStreamedBody).
	streamed bool
}

// writeName is the name of a write route's operation ("" for a read).
func (r apiRoute) writeName() string {
	switch {
	case r.method == fiber.MethodGet:
		return ""
	case r.name != "":
		return r.name
	default:
		return r.method + " " + r.path
	}
}

// apiRoutes is § 10's table, without the claims (claimRoutes), keys (keyRoutes), artifacts
// and feed, which register themselves.
func apiRoutes(svc *protocol.Service) []apiRoute {
	const get, post, ok = fiber.MethodGet, fiber.MethodPost, fiber.StatusOK
	return []apiRoute{
		{class: admission.Read, method: get, path: "/v1/manifest", status: ok, op: op(svc.GetManifest), public: true},
		{class: admission.Read, method: get, path: "/.well-known/parley", status: ok, op: op(svc.GetManifest), public: true},
		{class: admission.Write, method: post, path: "/v1/messages", status: fiber.StatusCreated, op: op(svc.Send), name: "send"},
		{class: admission.Read, method: get, path: "/v1/threads", status: ok, op: op(svc.ListThreads)},
		{class: admission.Read, method: get, path: "/v1/threads/:id", status: ok, op: op(svc.ReadThread)},
		{class: admission.Read, method: get, path: "/v1/threads/:id/events", status: ok, op: op(svc.ReadEvents)},
		{class: admission.Write, method: post, path: "/v1/threads/:id/confirm", status: ok, op: op(svc.Confirm), name: "confirm"},
		{class: admission.Write, method: post, path: "/v1/threads/:id/mark", status: ok, op: op(svc.Mark), name: "mark"},
		{class: admission.Listen, method: get, path: "/v1/inbox", status: ok, op: op(svc.Inbox), waits: true},
		{class: admission.Write, method: post, path: "/v1/messages/:id/hide", id: messagePath, status: ok, op: op(svc.Hide), name: "message_hide"},
		{class: admission.Write, method: post, path: "/v1/messages/:id/unhide", id: messagePath, status: ok, op: op(svc.Unhide), name: "message_unhide"},
		// § 16 rooms
		{class: admission.Read, method: get, path: "/v1/rooms", status: ok, op: op(svc.ListRooms)},
		{class: admission.Write, method: post, path: "/v1/rooms", status: fiber.StatusCreated, op: op(svc.CreateRoom), name: "room_create"},
		{class: admission.Write, method: fiber.MethodPatch, path: "/v1/rooms/:id", id: roomPath, status: ok, op: op(svc.UpdateRoom), name: "room_update"},
		{class: admission.Write, method: post, path: "/v1/threads/:id/move", status: ok, op: op(svc.MoveThread), name: "thread_move"},
	}
}

// api is the binding's state: the operation layer and where faults are logged.
type api struct {
	svc     *protocol.Service
	log     *slog.Logger
	metrics *Metrics
}

// registerAPI adds the routes of § 10 to app. Every path also answers the methods it does not
// serve, with 405 and an Allow header, so that a wrong method is told what would be right.
func registerAPI(rt *router, svc *protocol.Service, log *slog.Logger, m *Metrics, more ...apiRoute) {
	a := &api{svc: svc, log: log, metrics: m}
	var paths []string
	allow := map[string][]string{}
	for _, r := range append(append(append(append(apiRoutes(svc), claimRoutes(svc)...), keyRoutes(svc)...), searchRoutes(svc)...), append(importRoutes(svc), more...)...) {
		h := a.handler(r)
		rt.add(r.class, r.method, r.path, h)
		if _, seen := allow[r.path]; !seen {
			paths = append(paths, r.path)
		}
		allow[r.path] = append(allow[r.path], r.method)
		if r.method == fiber.MethodGet {
			rt.add(r.class, fiber.MethodHead, r.path, h)
			allow[r.path] = append(allow[r.path], fiber.MethodHead)
		}
	}
	for _, p := range paths {
		rt.all(admission.Read, p, methodNotAllowed(strings.Join(allow[p], ", ")))
	}
	a.registerArtifacts(rt)
}

// handler runs one route in the order of § 9: the request's size, then the token, then the
// input, then whatever the operation checks.
func (a *api) handler(r apiRoute) fiber.Handler {
	operation := r.method + " " + r.path
	return func(c *fiber.Ctx) error {
		ex := exchangeOf(c)
		ex.transport, ex.operation = transportHTTP, operation
		// The request's database work has a deadline; a long poll's wait has its own bounds,
		// and the inbox bounds each of its reads.
		bounded, cancel := a.svc.Bounded(c.UserContext())
		defer cancel()
		admit := a.admit
		if r.streamed {
			admit = a.admitStreamed
		}
		actor, err := admit(c, bounded)
		if err != nil {
			return a.writeError(c, err)
		}
		ex.askedBy(actor)
		if r.class.Heavy() && actor != nil {
			// A heavy route (an import) takes its slot once its caller is known (§ 19), before
			// it reads its body.
			release, err := a.svc.Admit(bounded, r.class, protocol.HolderOf(actor, clientAddress(c)))
			if err != nil {
				return a.writeError(c, err)
			}
			defer release()
		}
		id := r.id
		if id == (pathID{}) {
			id = threadPath
		}
		// § 15: a write's idempotency key is looked up right after authentication.
		key, err := idempotencyKey(c, r, actor)
		if err != nil {
			return a.writeError(c, err)
		}
		var raw []byte
		var bad *protocol.Error
		switch {
		case r.streamed && actor == nil:
			// Without a token a streamed body is not read at all: the operation answers
			// unauthenticated.
		case r.streamed:
			if err := a.readStreamedBody(c); err != nil {
				return a.writeError(c, err)
			}
			fallthrough
		default:
			raw, bad = requestInput(c, r.method == fiber.MethodPost || r.method == fiber.MethodPut || r.method == fiber.MethodPatch, id)
		}
		if bad != nil {
			if actor != nil || r.public {
				return writeRefusal(c, bad)
			}
			// Without a token the operation answers unauthenticated before it reads any input.
			raw = nil
		}
		ctx := bounded
		if r.waits {
			var stop context.CancelFunc
			ctx, stop = whileClientWaits(c.UserContext(), c)
			defer stop()
			if c.QueryInt("wait_seconds") > 0 {
				defer a.metrics.waiting()()
			}
		}
		res, err := a.svc.Idempotently(ctx, actor, key, r.writeName(), raw, func(ctx context.Context) (any, error) {
			return r.op(ctx, actor, raw)
		})
		if err != nil {
			return a.writeError(c, err)
		}
		markReplayed(c, res)
		ex.ended(res, nil)
		if doc, ok := res.(document); ok && doc.IsDocument() {
			return writeDocument(c, r.status, doc)
		}
		return writeJSON(c, statusOf(r, res), res)
	}
}

// admit makes the first checks of § 9 that every route makes: the request's size, as its
// body arrives (readBody), then its token. The caller is nil without a token, for the
// operation to refuse or not.
func (a *api) admit(c *fiber.Ctx, ctx context.Context) (*protocol.Actor, error) {
	if err := readBody(c, a.svc.CheckRequestSize); err != nil {
		return nil, err
	}
	return a.svc.AuthenticateHeader(ctx, clientAddress(c), authorizationHeaders(c))
}

// admitStreamed is admit for a route whose body may be as large as an import and is not
// read yet: its declared size is checked now, a chunked body's as it is read.
func (a *api) admitStreamed(c *fiber.Ctx, ctx context.Context) (*protocol.Actor, error) {
	if err := a.svc.CheckImportSize(c.Request().Header.ContentLength()); err != nil {
		c.Context().SetConnectionClose()
		return nil, err
	}
	return a.svc.AuthenticateHeader(ctx, clientAddress(c), authorizationHeaders(c))
}

// authorizationHeaders is the value of every Authorization header of the request, in order:
// the operation layer refuses more than one.
func authorizationHeaders(c *fiber.Ctx) []string {
	raw := c.Request().Header.PeekAll(fiber.HeaderAuthorization)
	values := make([]string, len(raw))
	for i, v := range raw {
		values[i] = string(v)
	}
	return values
}

// idempotencyKey is the Idempotency-Key of a write by an authenticated caller ("" when there
// is none, for a read, or without a caller, whom the operation refuses); a malformed one is
// invalid_body.
func idempotencyKey(c *fiber.Ctx, r apiRoute, actor *protocol.Actor) (string, error) {
	if actor == nil || r.writeName() == "" {
		return "", nil
	}
	raw := c.Request().Header.PeekAll(protocol.IdempotencyKeyHeader)
	if len(raw) == 0 {
		return "", nil
	}
	values := make([]string, len(raw))
	for i, v := range raw {
		values[i] = string(v)
	}
	return protocol.ParseIdempotencyKeyHeader(values)
}

// markReplayed says of an answer repeated under its idempotency key that it is one.
func markReplayed(c *fiber.Ctx, res any) {
	if _, ok := res.(*protocol.Replayed); ok {
		c.Set(protocol.IdempotentReplayedHeader, "true")
	}
}
