package web

import (
	"bufio"
	"context"
	"io"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/parleyforum/parley/protocol"
	"github.com/parleyforum/parley/protocol/admission"
)

// GET /v1/export?format=&thread=&room=: an export in any format (PROTOCOL.md § 14–16),
// within what the token reads. The request is checked as every route's (§ 9's order) and the
// export opened before anything is sent, so that a refusal has its status; then the export
// is streamed from one snapshot after the handler returns, and its slot (one of the
// identity's ExportsPerIdentity) is given back when the stream ends, however it ends: also
// when its client goes before the first byte, or the answer is never sent.

// exportWriteTimeout bounds each write of an export's stream: a reader that takes nothing
// for this long ends it (as the feed's listeners).
const exportWriteTimeout = 30 * time.Second

// exportDeadline bounds a whole export: the dataset of a forum of a million messages takes
// about three minutes on a busy machine.
const exportDeadline = 30 * time.Minute

// registerExport adds GET /v1/export.
func registerExport(rt *router, svc *protocol.Service, log *slog.Logger, m *Metrics) {
	a := &api{svc: svc, log: log, metrics: m}
	rt.get(admission.Export, "/v1/export", a.export)
	rt.all(admission.Read, "/v1/export", methodNotAllowed(fiber.MethodGet+", "+fiber.MethodHead))
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
	// The export's work ends when its client has gone, when the server shuts down, or when
	// the server is done with the answer (exportBody.Close), whichever comes first, and
	// within exportDeadline in any case. Its slot is given back when its writer ends, or
	// when the answer ends before the writer began.
	deadline, cancelDeadline := context.WithTimeout(context.Background(), exportDeadline)
	ctx, stopWatching := whileClientWaits(deadline, c)
	end := func() { stopWatching(); cancelDeadline() }
	pr, pw := io.Pipe()
	body := &exportBody{PipeReader: pr, end: end, stream: stream}
	conn, log := c.Context().Conn(), a.log
	go func() {
		defer end()
		if !body.began.CompareAndSwap(false, true) {
			return // the answer has ended already; Close gave the slot back
		}
		defer pw.Close()
		w := bufio.NewWriter(pw)
		// A failed write is a reader gone, or the deadline: the stream ends without its last
		// line, which tells the reader it is incomplete.
		if err := stream.Stream(ctx, &deadlineWriter{w: w, conn: conn}); err != nil {
			log.Info("export ended early", "format", stream.Format, "err", err)
			return
		}
		_ = w.Flush()
	}()
	c.Context().Response.SetBodyStream(body, -1)
	return nil
}

// exportBody is the answer's body as the server reads it, from the export's writer. The
// server closes it when it is done with the answer — sent, failed or dropped: the export's
// work ends then, and its slot is given back even if its writer never began.
type exportBody struct {
	*io.PipeReader
	end    func()
	stream *protocol.ExportStream
	began  atomic.Bool // the writer began (or will never begin)
	closed sync.Once
}

func (b *exportBody) Close() error {
	b.closed.Do(func() {
		b.end()
		if b.began.CompareAndSwap(false, true) {
			b.stream.Close()
		}
		b.PipeReader.Close()
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
