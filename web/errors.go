package web

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/parleyforum/parley/locale"
	"github.com/parleyforum/parley/protocol"
	"github.com/parleyforum/parley/protocol/mcpserver"
	"github.com/parleyforum/parley/views"
)

// errorHandler answers an error a handler returned. On the API paths it is a refusal in JSON
// (answersAsAPI); under /mcp a JSON-RPC error (mcpErrorAnswer). Everywhere else it is one of
// the forum's own pages in the reader's language, naming the status (errorPage): a *fiber.Error
// (404, 405, 413 …) is the client's to know; anything else is logged and answered as a 500
// page, so that no internal detail (an SQL error, a file path) reaches the client.
func errorHandler(log *slog.Logger, p *pages) fiber.ErrorHandler {
	return func(c *fiber.Ctx, err error) error {
		c.Set(fiber.HeaderXContentTypeOptions, "nosniff") // also on what no route answered
		if refusedWhileRead(c) && !discarded(c) {
			// The URL the server made of a request it refused may not be the request's own
			// (a Host that is no host moves its path): the answer is in the terms of the
			// path on its request line.
			c.Path(targetPath(c.Request().Header.RequestURI()))
		}
		err = withoutRequestBytes(c, err)
		if answersAsAPI(c, err) {
			return apiErrorAnswer(c, err, log)
		}
		mcp := isMCPPath(requestPath(c))
		if unavailable(err) && !mcp {
			// The database did not answer in time: the forum's own page, rendered on a
			// context of its own, never a bare 500.
			return p.unavailablePage(c)
		}
		var fe *fiber.Error
		switch {
		case errors.As(err, &fe):
		case unavailable(err):
			fe = fiber.ErrServiceUnavailable
		default:
			log.ErrorContext(c.UserContext(), "request failed", "method", c.Method(), "path", c.Path(), "err", err)
			fe = fiber.ErrInternalServerError
		}
		if fe.Code == fiber.StatusNotFound {
			exchangeOf(c).operation = unmatched
		}
		if mcp {
			return mcpErrorAnswer(c, fe)
		}
		return p.errorPage(c, fe.Code)
	}
}

// isMCPPath reports whether a request is MCP's (§ 10), whose client reads no HTML: /mcp and
// what is under it. Routing ignores case, so this does too.
func isMCPPath(path string) bool {
	p := strings.ToLower(path)
	return p == "/mcp" || strings.HasPrefix(p, "/mcp/")
}

// mcpErrorAnswer answers, as a JSON-RPC error with its HTTP status, what the server refused
// at /mcp before the MCP handler read it: a body or headers too large (payload_too_large, as
// the handler's own 413), a path under /mcp that serves nothing (not_found), a Host that is
// no host or a method the server does not know (invalid_body) — the refusal of § 9 as the
// error's data. The message is the server's own, never the request's bytes.
func mcpErrorAnswer(c *fiber.Ctx, fe *fiber.Error) error {
	var refusal *protocol.Error
	message := fe.Message
	switch {
	case fe.Code == fiber.StatusRequestEntityTooLarge, fe.Code == fiber.StatusRequestHeaderFieldsTooLarge:
		refusal = protocol.Refuse(protocol.ReasonPayloadTooLarge, "the request is larger than the server reads")
	case fe.Code == fiber.StatusNotFound:
		refusal = protocol.Refuse(protocol.ReasonNotFound, "nothing is served at this path; MCP is served at /mcp")
	case fe.Code < fiber.StatusInternalServerError:
		// A request that cannot be read (§ 19: every refusal is the protocol's).
		refusal = protocol.Refuse(protocol.ReasonInvalidBody, "the request cannot be read: %s", fe.Message)
	}
	if refusal != nil {
		refusal.Status = fe.Code
		message = refusal.Error()
		exchangeOf(c).refused(refusal)
	}
	exchangeOf(c).transport = transportMCP
	c.Set(fiber.HeaderContentType, fiber.MIMEApplicationJSON)
	c.Set(fiber.HeaderCacheControl, "no-store")
	return c.Status(fe.Code).Send(mcpserver.HTTPError(fe.Code, message, refusal))
}

// errorPage answers status with the forum's page for it: the page of the request a page
// handler began (its session, its language), or, for an address no page serves, one begun
// here, so that the reader still reads it signed in and in the language chosen. Without the
// database it is a page without a session.
func (p *pages) errorPage(c *fiber.Ctx, status int) error {
	c.Response().ResetBody() // whatever a handler had begun to write
	// The page handler's deadline ended with it: the navigation's rooms get one of their own.
	bounded, cancel := p.svc.Bounded(context.WithoutCancel(c.UserContext()))
	defer cancel()
	c.SetUserContext(bounded)
	r, _ := c.Locals(pageRequestKey).(*pageRequest)
	if r == nil {
		setPageHeaders(c)
		begun, err := p.begin(c)
		if err != nil {
			return p.unavailablePage(c)
		}
		r = begun
		if r.dirty {
			if err := saveSession(p.store, c, r.sess); err != nil {
				p.log.ErrorContext(c.UserContext(), "saving the session of an error page", "err", err)
			}
		}
	}
	title, text := statusTexts(status)
	if c.Method() == fiber.MethodHead {
		return c.SendStatus(status)
	}
	return r.message(status, title, text)
}

// statusTexts are the title and text of the page for status, as locale keys.
func statusTexts(status int) (title, text string) {
	switch status {
	case fiber.StatusNotFound:
		return "page.not_found", "page.not_found_text"
	case fiber.StatusForbidden:
		return "page.forbidden", "page.forbidden_text"
	case fiber.StatusMethodNotAllowed:
		return "error.method", "error.method_text"
	case fiber.StatusRequestEntityTooLarge:
		return "error.too_large", "error.too_large_text"
	case fiber.StatusServiceUnavailable:
		return "page.unavailable", "reason.unavailable"
	}
	if status >= 500 {
		return "error.fault", "error.fault_text"
	}
	return "error.request", "error.request_text"
}

// unmatched is the operation of a request that no route serves: one label for every such
// path, so that a scan of random paths cannot grow the metrics without bound.
const unmatched = "unmatched"

// logPanic logs a handler's panic with its stack; recover then answers 500.
func logPanic(log *slog.Logger) func(c *fiber.Ctx, e any) {
	return func(c *fiber.Ctx, e any) {
		log.ErrorContext(c.UserContext(), "request panicked", "method", c.Method(), "path", c.Path(), "panic", fmt.Sprint(e),
			"stack", string(debug.Stack()))
	}
}

// unavailablePage answers 503 with the forum's page for a database that cannot be reached,
// for a page request that has no pageRequest (or lost it): in the language the session chose
// (the cookie needs no database), and for a browser whose session names a server-side one,
// with the reader shown signed in — nameless, since only the database knows the name — not
// offered a sign-in as if the session had ended.
func (p *pages) unavailablePage(c *fiber.Ctx) error {
	sess := loadSession(p.store, c)
	r := &pageRequest{c: c, p: p, sess: sess, page: &views.Page{
		Tr:   locale.For(locale.Match(c.Query("lang"), str(sess, sessLang), c.Get(fiber.HeaderAcceptLanguage))),
		CSRF: str(sess, sessCSRF), Path: c.Path(), Now: time.Now(), QueueCount: -1,
	}}
	if str(sess, sessID) != "" {
		r.page.Viewer = &views.Viewer{} // signed in, the name unknown
	}
	setPageHeaders(c)
	return r.unavailable()
}

// busyPage answers 503 with the forum's page for a server whose places for the request's
// kind of work are all taken (routes.go), in the reader's language, with the seconds to wait.
func busyPage(c *fiber.Ctx, retryAfter int) error {
	r := &pageRequest{c: c, page: &views.Page{
		Tr:   locale.For(locale.Match(c.Query("lang"), c.Get(fiber.HeaderAcceptLanguage))),
		Path: c.Path(), Now: time.Now(), QueueCount: -1,
	}}
	setPageHeaders(c)
	err := r.message(fiber.StatusServiceUnavailable, "page.unavailable", "page.busy_text")
	c.Set(fiber.HeaderRetryAfter, strconv.Itoa(max(retryAfter, 1)))
	return err
}

// withoutRequestBytes replaces the message of a refusal the server made while it read a
// request (a malformed Content-Length, a broken request line, a Host that is no host):
// fasthttp's message may quote the bytes it read, Authorization header and all, and an answer
// must never echo them.
func withoutRequestBytes(c *fiber.Ctx, err error) error {
	var fe *fiber.Error
	if !errors.As(err, &fe) || !refusedWhileRead(c) {
		return err
	}
	switch fe.Code {
	case fiber.StatusBadRequest:
		return fiber.NewError(fe.Code, "the request could not be read: its request line or headers are malformed")
	}
	return err
}
