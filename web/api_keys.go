package web

import (
	"github.com/gofiber/fiber/v2"

	"github.com/parleyforum/parley/protocol"
	"github.com/parleyforum/parley/protocol/admission"
)

// keyRoutes are § 10's routes of the signed profile (§ 13): registering a public key (201,
// or 200 for a key registered before) and listing an identity's keys.
func keyRoutes(svc *protocol.Service) []apiRoute {
	return []apiRoute{
		{class: admission.Write, method: fiber.MethodPut, path: "/v1/keys", status: fiber.StatusCreated, op: op(svc.RegisterKey), name: "key_register"},
		{class: admission.Read, method: fiber.MethodGet, path: "/v1/keys", status: fiber.StatusOK, op: op(svc.ListKeys)},
	}
}

// found is a result that may name something that existed before the request: it is
// answered 200 rather than the route's 201.
type found interface{ Created() bool }

// statusOf is the status of an accepted request: the route's, or 200 for a result that
// created nothing.
func statusOf(r apiRoute, res any) int {
	if f, ok := res.(found); ok && !f.Created() && r.status == fiber.StatusCreated {
		return fiber.StatusOK
	}
	return r.status
}
