package web

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/parleyforum/parley/protocol"
	"github.com/parleyforum/parley/protocol/admission"
)

// § 13 artifacts over HTTP: PUT /v1/artifacts takes raw bytes (not the JSON of the other
// routes) up to artifact_max_bytes, and GET /v1/artifacts/{ref} gives them back. What is
// served inline and what as an attachment is protocol.ServeArtifactAs's decision.

// artifactCacheControl: a ref names its bytes forever, so a reader never needs to ask again;
// private, because reading needs a token.
const artifactCacheControl = "private, max-age=31536000, immutable"

// artifactCSP keeps even a browser that opens an artifact directly from running anything of
// it.
const artifactCSP = "default-src 'none'; sandbox"

// registerArtifacts adds the two routes, each answering other methods with 405.
func (a *api) registerArtifacts(rt *router) {
	rt.addSized(admission.Write, a.svc.CheckArtifactSize, fiber.MethodPut, "/v1/artifacts", a.putArtifact)
	rt.all(admission.Read, "/v1/artifacts", methodNotAllowed(fiber.MethodPut))
	rt.get(admission.Read, "/v1/artifacts/:ref", a.getArtifact)
	rt.all(admission.Read, "/v1/artifacts/:ref", methodNotAllowed(fiber.MethodGet+", "+fiber.MethodHead))
}

// putArtifact checks in the order of § 9: the size against artifact_max_bytes (this route's
// own limit), the token, then the operation's checks.
func (a *api) putArtifact(c *fiber.Ctx) error {
	ex := exchangeOf(c)
	ex.transport, ex.operation = transportHTTP, "PUT /v1/artifacts"
	if err := readBody(c, a.svc.CheckArtifactSize); err != nil {
		return a.writeError(c, err)
	}
	ctx, cancel := a.svc.Bounded(c.UserContext())
	defer cancel()
	actor, err := a.authenticate(ctx, c)
	if err != nil {
		return a.writeError(c, err)
	}
	key, err := idempotencyKey(c, apiRoute{method: fiber.MethodPut, name: "artifact_put"}, actor)
	if err != nil {
		return a.writeError(c, err)
	}
	// The input a key is remembered with is the bytes and their media type.
	body, media := c.Request().Body(), string(c.Request().Header.ContentType())
	input := append([]byte(media+"\n"), body...)
	res, err := a.svc.Idempotently(ctx, actor, key, "artifact_put", input, func(ctx context.Context) (any, error) {
		return a.svc.PutArtifact(ctx, actor, body, media)
	})
	if err != nil {
		return a.writeError(c, err)
	}
	markReplayed(c, res)
	ex.ended(res, nil)
	return writeJSON(c, fiber.StatusCreated, res)
}

// getArtifact serves an artifact's bytes to a token (serveArtifact).
func (a *api) getArtifact(c *fiber.Ctx) error {
	ex := exchangeOf(c)
	ex.transport, ex.operation = transportHTTP, "GET /v1/artifacts/:ref"
	ctx, cancel := a.svc.Bounded(c.UserContext())
	defer cancel()
	actor, err := a.authenticate(ctx, c)
	if err != nil {
		return a.writeError(c, err)
	}
	if c.Context().QueryArgs().Len() > 0 {
		return writeRefusal(c, protocol.Refuse(protocol.ReasonInvalidBody, "GET /v1/artifacts/{ref} takes no query parameters"))
	}
	raw, _ := json.Marshal(map[string]string{"ref": c.Params("ref")})
	art, err := a.svc.GetArtifact(ctx, actor, raw)
	if err != nil {
		return a.writeError(c, err)
	}
	ex.ended(art.ArtifactInfo, nil)
	return serveArtifact(c, art)
}

// serveArtifact answers with an artifact's bytes, for the API and the pages alike: a strong
// ETag (its ref) and 304 to a reader that has them already; served inline only as
// protocol.ServeArtifactAs allows, never sniffed, and under a CSP that runs nothing of it.
func serveArtifact(c *fiber.Ctx, art *protocol.Artifact) error {
	etag := `"` + art.Ref + `"`
	c.Set(fiber.HeaderETag, etag)
	c.Set(fiber.HeaderCacheControl, artifactCacheControl)
	c.Set(fiber.HeaderXContentTypeOptions, "nosniff")
	c.Set(fiber.HeaderContentSecurityPolicy, artifactCSP)
	if noneMatch(string(c.Request().Header.Peek(fiber.HeaderIfNoneMatch)), etag) {
		return c.SendStatus(fiber.StatusNotModified)
	}
	serving := protocol.ServeArtifactAs(art.MediaType)
	c.Set(fiber.HeaderContentType, serving.MediaType)
	if serving.Attachment {
		c.Set(fiber.HeaderContentDisposition, `attachment; filename="`+strings.Replace(art.Ref, ":", "-", 1)+`"`)
	}
	c.Status(fiber.StatusOK).Response().SetBody(art.Content)
	return nil
}

// authenticate finds the caller of the request (nil without a token) and notes it for the
// access log.
func (a *api) authenticate(ctx context.Context, c *fiber.Ctx) (*protocol.Actor, error) {
	actor, err := a.svc.AuthenticateHeader(ctx, clientAddress(c), authorizationHeaders(c))
	if err == nil {
		exchangeOf(c).askedBy(actor)
	}
	return actor, err
}

// noneMatch reports whether an If-None-Match header names etag (or is *): RFC 9110 § 13.1.2
// compares weakly, so W/"x" names "x" too.
func noneMatch(header, etag string) bool {
	for _, tag := range strings.Split(header, ",") {
		tag = strings.TrimPrefix(strings.TrimSpace(tag), "W/")
		if tag == etag || tag == "*" {
			return true
		}
	}
	return false
}
