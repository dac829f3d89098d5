package web

import (
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/parleyforum/parley/locale"
	"github.com/parleyforum/parley/views"
)

// errorHandler answers an error a handler returned. On the API paths it is a refusal in JSON
// (answersAsAPI). Elsewhere a *fiber.Error (404, 405, 413 …) is the client's to know;
// anything else is logged and answered as a bare 500, so that no internal detail (an SQL
// error, a file path) reaches the client.
func errorHandler(log *slog.Logger) fiber.ErrorHandler {
	return func(c *fiber.Ctx, err error) error {
		c.Set(fiber.HeaderXContentTypeOptions, "nosniff") // also on what no route answered
		err = withoutRequestBytes(c, err)
		if answersAsAPI(c, err) {
			return apiErrorAnswer(c, err, log)
		}
		if unavailable(err) {
			// The database did not answer in time: the forum's own page, rendered on a
			// context of its own, never a bare 500.
			return unavailablePage(c)
		}
		var fe *fiber.Error
		if !errors.As(err, &fe) {
			log.ErrorContext(c.UserContext(), "request failed", "method", c.Method(), "path", c.Path(), "err", err)
			fe = fiber.ErrInternalServerError
		}
		if fe.Code == fiber.StatusNotFound {
			exchangeOf(c).operation = unmatched
		}
		c.Set(fiber.HeaderContentType, fiber.MIMETextPlainCharsetUTF8)
		return c.Status(fe.Code).SendString(fe.Message)
	}
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
// in the reader's language, for a page request that has no pageRequest (or lost it).
func unavailablePage(c *fiber.Ctx) error {
	r := &pageRequest{c: c, page: &views.Page{
		Tr:   locale.For(locale.Match(c.Query("lang"), c.Get(fiber.HeaderAcceptLanguage))),
		Path: c.Path(), Now: time.Now(), QueueCount: -1,
	}}
	setPageHeaders(c)
	return r.unavailable()
}

// withoutRequestBytes replaces the message of a refusal the server made while it read a
// request it then discarded (a malformed Content-Length, a broken request line): fasthttp's
// message quotes the bytes it read, Authorization header and all, and an answer must never
// echo them.
func withoutRequestBytes(c *fiber.Ctx, err error) error {
	var fe *fiber.Error
	if !errors.As(err, &fe) || len(c.Request().Header.RawHeaders()) != 0 {
		return err
	}
	switch fe.Code {
	case fiber.StatusBadRequest:
		return fiber.NewError(fe.Code, "the request could not be read: its request line or headers are malformed")
	}
	return err
}
