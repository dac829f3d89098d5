package web

import (
	"context"
	"time"

	"github.com/gofiber/fiber/v2"
)

// fasthttp tells a handler nothing when its client goes away, so a request that waits (a
// long poll) looks at its connection now and then: a client that has closed it no longer
// needs the answer, and its wait ends then instead of after its wait_seconds.

// clientCheckEvery is how often a waiting request looks at its connection: one system call,
// no database work.
const clientCheckEvery = 500 * time.Millisecond

// whileClientWaits is a context for the work of c that ends when the server shuts down or
// c's client has closed its connection. The returned stop must be called when the work ends.
func whileClientWaits(parent context.Context, c *fiber.Ctx) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(parent)
	shutdown := c.Context().Done() // closed when the server shuts down
	conn := c.Context().Conn()
	go func() {
		tick := time.NewTicker(clientCheckEvery)
		defer tick.Stop()
		for {
			select {
			case <-shutdown:
				cancel()
				return
			case <-ctx.Done():
				return
			case <-tick.C:
				if clientGone(conn) {
					cancel()
					return
				}
			}
		}
	}()
	return ctx, cancel
}
