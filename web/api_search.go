package web

import (
	"github.com/gofiber/fiber/v2"

	"github.com/parleyforum/parley/protocol"
	"github.com/parleyforum/parley/protocol/admission"
)

// searchRoutes are § 10's routes of the search profile (§ 13).
func searchRoutes(svc *protocol.Service) []apiRoute {
	return []apiRoute{
		{class: admission.Read, method: fiber.MethodGet, path: "/v1/search", status: fiber.StatusOK, op: op(svc.Search)},
	}
}
