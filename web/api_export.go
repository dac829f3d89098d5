package web

import (
	"bufio"
	"context"
	"log/slog"
	"net"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/parleyforum/parley/protocol"
)

// GET /v1/export?format=&thread=&room=: an export in any format (PROTOCOL.md § 14–16),
// within what the token reads. The request is checked as every route's (§ 9's order) and the
// export opened before anything is sent, so that a refusal has its status; then the export
// is streamed from one snapshot after the handler returns, and its slot (one of the
// identity's ExportsPerIdentity) is given back when the stream ends, however it ends.

// exportWriteTimeout bounds each write of an export's stream: a reader that takes nothing
// for this long ends it (as the feed's listeners).
const exportWriteTimeout = 30 * time.Second

// exportDeadline bounds a whole export: the dataset of a forum of a million messages takes
// about three minutes on a busy machine.
const exportDeadline = 30 * time.Minute

// registerExport adds GET /v1/export.
func registerExport(app *fiber.App, svc *protocol.Service, log *slog.Logger, m *Metrics) {
	a := &api{svc: svc, log: log, metrics: m}
	app.Get("/v1/export", a.export)
	app.All("/v1/export", methodNotAllowed(fiber.MethodGet+", "+fiber.MethodHead))
}

func (a *api) export(c *fiber.Ctx) error {
	ex := exchangeOf(c)
	ex.transport, ex.operation = transportHTTP, "GET /v1/export"
	bounded, cancel := a.svc.Bounded(c.UserContext())
	defer cancel()
	actor, err := a.admit(c, bounded)
	if err != nil {
		return a.writeError(c, err)
	}
	ex.askedBy(actor)
	raw, bad := requestInput(c, false, threadPath)
	if bad != nil && actor != nil {
		return writeRefusal(c, bad)
	}
	stream, err := a.svc.OpenExport(bounded, actor, raw)
	if err != nil {
		return a.writeError(c, err)
	}
	c.Set(fiber.HeaderContentType, stream.MediaType+"; charset=utf-8")
	c.Set(fiber.HeaderContentDisposition, `attachment; filename="parley-export.`+stream.Extension+`"`)
	c.Set(fiber.HeaderCacheControl, "no-store")
	c.Set(fiber.HeaderXContentTypeOptions, "nosniff")
	if c.Method() == fiber.MethodHead {
		stream.Close()
		return nil
	}
	conn, shutdown, log := c.Context().Conn(), c.Context().Done(), a.log
	c.Context().SetBodyStreamWriter(func(w *bufio.Writer) {
		ctx, stop := context.WithTimeout(context.Background(), exportDeadline)
		defer stop()
		go func() {
			select {
			case <-shutdown:
				stop()
			case <-ctx.Done():
			}
		}()
		// A failed write is a reader gone, or the deadline: the stream ends without its last
		// line, which tells the reader it is incomplete.
		if err := stream.Stream(ctx, &deadlineWriter{w: w, conn: conn}); err != nil {
			log.Info("export ended early", "format", stream.Format, "err", err)
			return
		}
		_ = w.Flush()
	})
	return nil
}

// deadlineWriter sets the connection's write deadline before each write, so that a stream
// longer than the server's write timeout goes on while its reader keeps reading.
type deadlineWriter struct {
	w    *bufio.Writer
	conn net.Conn
}

func (d *deadlineWriter) Write(p []byte) (int, error) {
	_ = d.conn.SetWriteDeadline(time.Now().Add(exportWriteTimeout))
	return d.w.Write(p)
}
