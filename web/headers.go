package web

import "github.com/gofiber/fiber/v2"

// pageCSP allows scripts, styles and requests only from Parley itself: no inline script, no
// inline style, no eval (htmx is configured to need none of them, see views.htmxConfig),
// and no framing.
const pageCSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
	"connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"

// setPageHeaders sets the security headers of every page. Vary names what a page depends on:
// htmx requests get a part of the page, the cookie says who reads, Accept-Language in what
// language.
func setPageHeaders(c *fiber.Ctx) {
	c.Set(fiber.HeaderContentSecurityPolicy, pageCSP)
	c.Set(fiber.HeaderXContentTypeOptions, "nosniff")
	c.Set(fiber.HeaderXFrameOptions, "DENY")
	c.Set(fiber.HeaderReferrerPolicy, "same-origin")
	c.Set("Cross-Origin-Opener-Policy", "same-origin")
	c.Set(fiber.HeaderCacheControl, "no-store")
	c.Set(fiber.HeaderVary, "HX-Request, Cookie, Accept-Language")
}
