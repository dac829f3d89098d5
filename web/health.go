package web

import (
	"context"
	"log/slog"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/parleyforum/parley/protocol/admission"
	"github.com/parleyforum/parley/storage"
)

// healthTimeout is how long /healthz waits for the database before it calls it unavailable:
// short, so that a load balancer's check never piles up behind a hung database.
const healthTimeout = 2 * time.Second

func registerHealth(rt *router, db *storage.DB, log *slog.Logger) {
	rt.get(admission.Read, "/healthz", func(c *fiber.Ctx) error {
		ctx, cancel := context.WithTimeout(c.UserContext(), healthTimeout)
		defer cancel()
		c.Set(fiber.HeaderCacheControl, "no-store")
		if err := db.Healthy(ctx); err != nil {
			log.WarnContext(c.UserContext(), "health check: the database does not answer", "err", err)
			return c.Status(fiber.StatusServiceUnavailable).JSON(fiber.Map{"status": "unavailable"})
		}
		return c.JSON(fiber.Map{"status": "ok"})
	})
}
