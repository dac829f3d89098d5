package web

import (
	"github.com/gofiber/fiber/v2"

	"github.com/parleyforum/parley/protocol"
	"github.com/parleyforum/parley/protocol/admission"
)

// GET /v1/schema/{type}.json: the JSON Schema (draft 2020-12) of one line type of the dataset
// (PROTOCOL.md § 15). Like the manifest it needs no token, and a bad one is refused.
func schemaRoutes(svc *protocol.Service) []apiRoute {
	return []apiRoute{{class: admission.Read, method: fiber.MethodGet, path: "/v1/schema/:id.json", id: pathID{"type", ""}, status: fiber.StatusOK,
		op: op(svc.GetSchema), public: true}}
}
