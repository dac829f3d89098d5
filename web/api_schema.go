package web

import (
	"github.com/gofiber/fiber/v2"

	"github.com/parleyforum/parley/protocol"
)

// GET /v1/schema/{type}.json: the JSON Schema (draft 2020-12) of one line type of the dataset
// (PROTOCOL.md § 15), needing no token: a schema says what the lines look like, never what
// the forum holds.

// registerSchemas adds GET /v1/schema/{type}.json.
func registerSchemas(app *fiber.App) {
	app.Get("/v1/schema/:type.json", func(c *fiber.Ctx) error {
		schema, ok := protocol.DatasetSchema(c.Params("type"))
		if !ok {
			return writeRefusal(c, protocol.Refuse(protocol.ReasonNotFound, "no schema %q: the line types are %v", c.Params("type"), protocol.DatasetLineTypes))
		}
		c.Set(fiber.HeaderContentType, "application/schema+json")
		c.Set(fiber.HeaderCacheControl, "public, max-age=3600")
		return c.Status(fiber.StatusOK).Send(schema)
	})
	app.All("/v1/schema/:type.json", methodNotAllowed(fiber.MethodGet+", "+fiber.MethodHead))
}
