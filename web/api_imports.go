package web

import (
	"github.com/gofiber/fiber/v2"

	"github.com/parleyforum/parley/protocol"
	"github.com/parleyforum/parley/protocol/admission"
)

// importPath is § 14's import between realms.
const importPath = "/v1/imports"

// importRoutes are § 14's import between realms: POST /v1/imports, by a human administrator,
// with another realm's JSON export or jsonl dataset as the body (201 when it wrote anything,
// 200 when every claim was here already). Its body may be as large as import_max_bytes, and is
// read as a stream once the caller is known (readStreamedBody).
func importRoutes(svc *protocol.Service) []apiRoute {
	return []apiRoute{
		{class: admission.Import, method: fiber.MethodPost, path: importPath, status: fiber.StatusCreated, op: op(svc.Import), name: "import", streamed: true},
	}
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
