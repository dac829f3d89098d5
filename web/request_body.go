package web

import (
	"bytes"
	"errors"
	"io"
	"net"
	"strings"

	"github.com/gofiber/fiber/v2"
	"github.com/valyala/fasthttp"
)

// Reading request bodies. The server streams them (fiber's StreamRequestBody): it reads a few
// kilobytes with the headers and hands the rest over as it arrives, so that a declared
// Content-Length reserves nothing. readBodies then reads every body before the routes see it,
// within the largest body the server takes at all (bodyLimit), and refuses a larger one at once
// with 413, as the server's own refusal did; the routes read c.Body() as before. A route that
// reads its body as a stream of its own (streamedRoute: POST /v1/imports, within
// import_max_bytes) is left its stream, which it reads once it knows its caller.

// prefetched is how much of a body the server reads with the headers: a body of at most this
// many declared bytes is in memory before any handler runs.
const prefetched = 8 << 10

// prereading is the server's look at a request's headers before it reads any of the body:
// the body of POST /v1/imports, which its route reads itself once it knows the caller, and a
// body declared larger than its route takes are read no further than their first byte before
// the app sees the request, instead of the few kilobytes the server reads ahead of every
// other body — their answer (the import's, or 413) does not wait for more.
func prereading(limit int) func(*fasthttp.RequestHeader) fasthttp.RequestConfig {
	return func(h *fasthttp.RequestHeader) fasthttp.RequestConfig {
		if (h.IsPost() && isImportTarget(h.RequestURI())) || h.ContentLength() > limit {
			return fasthttp.RequestConfig{MaxRequestBodySize: 1}
		}
		return fasthttp.RequestConfig{} // the server's own
	}
}

// isImportTarget reports whether a request target (origin form, its query aside) is
// POST /v1/imports's path.
func isImportTarget(target []byte) bool {
	path, _, _ := bytes.Cut(target, []byte("?"))
	return bytes.EqualFold(bytes.TrimSuffix(path, []byte("/")), []byte(importPath))
}

// readBodies reads each request's body within limit bytes.
func readBodies(limit int) fiber.Handler {
	return func(c *fiber.Ctx) error {
		req := c.Request()
		declared := req.Header.ContentLength()
		switch {
		case !req.IsBodyStream(), streamedRoute(c), declared >= 0 && declared <= min(prefetched, limit):
			return c.Next()
		case declared > limit:
			c.Context().SetConnectionClose()
			return fiber.ErrRequestEntityTooLarge
		}
		var body bytes.Buffer
		n, err := body.ReadFrom(io.LimitReader(req.BodyStream(), int64(limit)+1))
		switch {
		case err != nil:
			c.Context().SetConnectionClose()
			return bodyReadError(err)
		case n > int64(limit):
			c.Context().SetConnectionClose()
			return fiber.ErrRequestEntityTooLarge
		}
		req.SetBodyRaw(body.Bytes())
		return c.Next()
	}
}

// bodyReadError is the server's answer to a body it could not read: not received in time
// (408), or broken (400).
func bodyReadError(err error) error {
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return fiber.ErrRequestTimeout
	}
	return fiber.NewError(fiber.StatusBadRequest, "the request's body cannot be read")
}

// streamedRoute reports whether the request is for a route that reads its body as a stream:
// POST /v1/imports (routing ignores case and a trailing slash, so this does too).
func streamedRoute(c *fiber.Ctx) bool {
	return c.Method() == fiber.MethodPost && strings.EqualFold(strings.TrimSuffix(c.Path(), "/"), importPath)
}

// readStreamedBody reads the body of POST /v1/imports, once its caller is known, as the import
// reads it (protocol.Service.ReadImport): as it arrives, within import_max_bytes, refused at
// its first byte when it is no JSON. The routes' input is then made of it as of any body.
func (a *api) readStreamedBody(c *fiber.Ctx) error {
	if e := checkJSONContent(c); e != nil {
		return e
	}
	req := c.Request()
	if !req.IsBodyStream() {
		return nil // no body, or one read already
	}
	raw, err := a.svc.ReadImport(req.BodyStream())
	if err != nil {
		c.Context().SetConnectionClose()
		return err
	}
	req.SetBodyRaw(raw)
	return nil
}
