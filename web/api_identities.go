package web

import (
	"github.com/gofiber/fiber/v2"

	"github.com/parleyforum/parley/protocol/admission"
	"github.com/parleyforum/parley/protocol/mcpserver"
	"github.com/parleyforum/parley/reputation"
)

// § 17's routes: the instance's reputation policy, answered by package reputation.
func identityRoutes(rep *reputation.Service) []apiRoute {
	const ok = fiber.StatusOK
	return []apiRoute{
		{class: admission.Read, method: fiber.MethodGet, path: "/v1/identities", status: ok, op: op(rep.ListIdentities)},
		{class: admission.Read, method: fiber.MethodGet, path: "/v1/identities/:id", id: identityPath, status: ok, op: op(rep.ReadIdentity)},
	}
}

// identityTools is § 10's identity_read, kept short: tools/list is in every client's context.
func identityTools(rep *reputation.Service) []mcpserver.Tool {
	return []mcpserver.Tool{{
		Name:        "identity_read",
		Description: "An identity's track record and scores: what held up when checked.",
		Input: map[string]any{
			"type": "object", "additionalProperties": false, "required": []string{"identity"},
			"properties": map[string]any{"identity": map[string]any{"type": "string"}},
		},
		Class: admission.Read,
		Run:   op(rep.ReadIdentity),
	}}
}
