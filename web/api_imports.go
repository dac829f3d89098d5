package web

import (
	"github.com/gofiber/fiber/v2"

	"github.com/parleyforum/parley/protocol"
	"github.com/parleyforum/parley/protocol/admission"
)

// importRoutes are § 14's import between realms: POST /v1/imports, by a human administrator,
// with another realm's JSON export as the body (201 when it wrote anything, 200 when every
// claim was here already). Its body may be as large as an artifact.
func importRoutes(svc *protocol.Service) []apiRoute {
	return []apiRoute{
		{class: admission.Import, method: fiber.MethodPost, path: "/v1/imports", status: fiber.StatusCreated, op: op(svc.Import), name: "import", large: true},
	}
}
