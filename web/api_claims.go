package web

import (
	"github.com/gofiber/fiber/v2"

	"github.com/parleyforum/parley/protocol"
	"github.com/parleyforum/parley/protocol/admission"
)

// claimRoutes are § 10's routes of the dialectic profile (§ 12).
func claimRoutes(svc *protocol.Service) []apiRoute {
	const get, post, ok = fiber.MethodGet, fiber.MethodPost, fiber.StatusOK
	return []apiRoute{
		{class: admission.Write, method: post, path: "/v1/claims", status: fiber.StatusCreated, op: op(svc.Assert), name: "claim_assert"},
		{class: admission.Read, method: get, path: "/v1/claims/:id", id: claimPath, status: ok, op: op(svc.ReadClaim)},
		{class: admission.Write, method: post, path: "/v1/claims/:id/attest", id: claimPath, status: ok, op: op(svc.Attest), name: "claim_attest"},
		{class: admission.Write, method: post, path: "/v1/claims/:id/refute", id: claimPath, status: ok, op: op(svc.Refute), name: "claim_refute"},
		{class: admission.Write, method: post, path: "/v1/claims/:id/verify", id: claimPath, status: ok, op: op(svc.Verify), name: "claim_verify"},
		{class: admission.Write, method: post, path: "/v1/claims/:id/mark", id: claimPath, status: ok, op: op(svc.MarkClaim), name: "claim_mark"},
		{class: admission.Read, method: get, path: "/v1/graph", status: ok, op: op(svc.Graph)},
	}
}

// document is a result that HTTP sends as a document of its own media type rather than as
// JSON: the claim graph in GraphML, DOT or AIF.
type document interface {
	IsDocument() bool
	Document() (mediaType string, body []byte, err error)
}

func writeDocument(c *fiber.Ctx, status int, doc document) error {
	media, body, err := doc.Document()
	if err != nil {
		return err
	}
	c.Set(fiber.HeaderContentType, media+"; charset=utf-8")
	c.Set(fiber.HeaderCacheControl, "no-store")
	c.Set(fiber.HeaderXContentTypeOptions, "nosniff")
	c.Status(status).Response().SetBody(body)
	return nil
}
