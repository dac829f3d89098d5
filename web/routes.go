package web

import (
	"github.com/gofiber/fiber/v2"

	"github.com/parleyforum/parley/protocol"
	"github.com/parleyforum/parley/protocol/admission"
)

// § 19: work waits its turn, in one place. Every route names its admission class where it
// is registered (protocol/admission), so that the route table shows what each may cost, and
// the router takes the class's slot for every request the route serves:
//
//   - Read and Write (the light classes) take a slot of the gate here, before the handler
//     runs, for no one's share; a request that finds none within the gate's short wait is
//     answered 503 unavailable with Retry-After, in the terms of its path. Its body is
//     received first (body.go), bounded by the route's limit: a client that sends slowly
//     holds its connection, never a place of work.
//   - Password, Export, Drawing and Import (the heavy classes) are admitted by their handler
//     with protocol.Service.Admit, once it knows whom to count the slot against (the caller's
//     identity, or its address): only the handler knows when the heavy part begins.
//   - Listen (long polls, the feed, the live pages) takes no slot: its waits are bounded by
//     inbox_waits_per_identity and inbox_waits_max, which its operation keeps.
//
// MCP is one route whose calls name their classes: each tool declares its own
// (protocol/mcpserver), and the MCP handler takes its slot.

// router registers the app's routes with their classes.
type router struct {
	app *fiber.App
	svc *protocol.Service
	// classes is every route's class by "METHOD path", byTool the routes whose requests'
	// classes are their calls' (MCP): what the test of the route table reads.
	classes map[string]admission.Class
	byTool  map[string]bool
}

func newRouter(app *fiber.App, svc *protocol.Service) *router {
	return &router{app: app, svc: svc, classes: map[string]admission.Class{}, byTool: map[string]bool{}}
}

// add registers the handlers for method and path, admitted as class: the slot is taken
// before the first runs and given back when it returns (the others run inside it, by
// c.Next). The body a request of a light class carries is held to request_max_bytes.
func (rt *router) add(class admission.Class, method, path string, handlers ...fiber.Handler) {
	rt.addSized(class, rt.svc.CheckRequestSize, method, path, handlers...)
}

// addSized is add for a route whose body has a limit of its own, checked by checkBody.
func (rt *router) addSized(class admission.Class, checkBody func(n int) error, method, path string, handlers ...fiber.Handler) {
	if !class.Declared() {
		panic("web: the route " + method + " " + path + " declares no admission class")
	}
	rt.classes[method+" "+path] = class
	admitted := append([]fiber.Handler{rt.admitted(class, checkBody, handlers[0])}, handlers[1:]...)
	rt.app.Add(method, path, admitted...)
}

// get registers the handlers for GET and HEAD.
func (rt *router) get(class admission.Class, path string, handlers ...fiber.Handler) {
	rt.add(class, fiber.MethodGet, path, handlers...)
	rt.add(class, fiber.MethodHead, path, handlers...)
}

// post registers the handlers for POST.
func (rt *router) post(class admission.Class, path string, handlers ...fiber.Handler) {
	rt.add(class, fiber.MethodPost, path, handlers...)
}

// all registers h for every method the app serves at path that nothing registered before.
func (rt *router) all(class admission.Class, path string, h fiber.Handler) {
	for _, method := range rt.app.Config().RequestMethods {
		if _, taken := rt.classes[method+" "+path]; !taken {
			rt.add(class, method, path, h)
		}
	}
}

// addByTool registers h for every method at path, each request admitted by the calls it
// carries, which declare their classes themselves (MCP's tools).
func (rt *router) addByTool(path string, h fiber.Handler) {
	for _, method := range rt.app.Config().RequestMethods {
		rt.byTool[method+" "+path] = true
		rt.app.Add(method, path, h)
	}
}

// use registers h for every path under prefix (the static files), admitted as class.
func (rt *router) use(class admission.Class, prefix string, h fiber.Handler) {
	if !class.Declared() {
		panic("web: " + prefix + " declares no admission class")
	}
	rt.classes["USE "+prefix] = class
	rt.app.Use(prefix, rt.admitted(class, rt.svc.CheckRequestSize, h))
}

// admitted is h behind its class's slot: taken here for the light classes, once the body has
// been received (checkBody is its route's limit), by h itself for the heavy ones, which also
// read their bodies themselves, and never for Listen.
func (rt *router) admitted(class admission.Class, checkBody func(n int) error, h fiber.Handler) fiber.Handler {
	if !class.Light() {
		return h
	}
	return func(c *fiber.Ctx) error {
		if err := readBody(c, checkBody); err != nil {
			return refuse(c, err)
		}
		release, err := rt.svc.Admit(c.UserContext(), class, "")
		if err != nil {
			return refuse(c, err)
		}
		defer release()
		return h(c)
	}
}

// refuse answers a request the router refused, in the terms of its path: § 9's refusal
// under /v1, a JSON-RPC error at /mcp, the forum's page elsewhere ("busy" for want of a slot,
// 503 with Retry-After).
func refuse(c *fiber.Ctx, err error) error {
	e, ok := protocol.AsError(err)
	switch {
	case !ok:
		return err
	case isAPIPath(c.Path()):
		exchangeOf(c).transport = transportHTTP
		return writeRefusal(c, e)
	case isMCPPath(c.Path()):
		return mcpRefusal(c, e)
	}
	exchangeOf(c).refused(e)
	if e.Reason == protocol.ReasonUnavailable {
		return busyPage(c, e.RetryHint)
	}
	return fiber.NewError(e.Status, e.Message)
}
