package web

import "github.com/gofiber/fiber/v2"

// clientAddress is the address a request came from, as the server counts it (the limit on
// failed authentications is kept per client address).
func clientAddress(c *fiber.Ctx) string {
	return c.IP()
}
