package web

import (
	"github.com/a-h/templ"
	"github.com/gofiber/fiber/v2"
)

// Render answers with the HTML of component, in the status already set on c (200 unless a
// handler set another). Handlers never write HTML by hand.
func Render(c *fiber.Ctx, component templ.Component) error {
	c.Set(fiber.HeaderContentType, fiber.MIMETextHTMLCharsetUTF8)
	return component.Render(c.UserContext(), c.Response().BodyWriter())
}
