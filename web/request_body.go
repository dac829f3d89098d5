package web

import (
	"github.com/gofiber/fiber/v2"
)

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
