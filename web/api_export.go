package web

import (
	"bufio"
	"context"
	"errors"
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
// export opened — admitted to a slot of the export class and its snapshot open — within the
// request's deadline, before anything is sent, so that a refusal (a hung database's 503
// included) has its status; then the export is streamed from that snapshot after the handler
// returns, and its slot and snapshot are given back when the stream ends, however it ends:
// also when its client goes before the first byte, or the answer is never sent.

// slowReaderWindow is how long a reader may read slower than min_read_bytes_per_second (§ 19)
// before its export is cut off; a reader that takes nothing at all for as long is cut too.
const slowReaderWindow = 10 * time.Second

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
	stream, err := a.svc.OpenExport(bounded, actor, clientAddress(c), raw)
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
	minRate := a.svc.Limits().MinReadBytesPerSecond
	go func() {
		defer end()
		if !body.began.CompareAndSwap(false, true) {
			return // the answer has ended already; Close gave the slot back
		}
		w := bufio.NewWriter(&pacedWriter{w: pw, conn: conn, minRate: minRate})
		err := stream.Stream(ctx, w)
		if err == nil {
			err = w.Flush()
		}
		if err != nil {
			// A reader gone or too slow, the deadline, the database: the answer is broken off
			// (the connection closed without the chunked body's end), so that no reader takes
			// a cut export for a whole one.
			log.Info("export ended early", "format", stream.Format, "err", err)
			pw.CloseWithError(err)
			return
		}
		_ = pw.Close()
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

// errSlowReader ends the export of a reader slower than min_read_bytes_per_second.
var errSlowReader = errors.New("the reader read slower than min_read_bytes_per_second for 10 s: cut off")

// pacedWriter passes an export to its reader and measures the reader's pace (§ 19): the bytes
// it took over the time the export waited for it — time the export spends reading the
// database is not the reader's — and cuts a reader slower than minRate bytes a second over
// slowReaderWindow of waiting. It passes the export on in pieces that a reader of minRate
// takes within a second, and sets the connection's write deadline slowReaderWindow ahead
// before each, so that a reader that takes nothing is cut as well, and a stream longer than
// the server's write timeout goes on while its reader keeps reading.
type pacedWriter struct {
	w       io.Writer
	conn    net.Conn
	minRate int
	waited  time.Duration
	taken   int
}

func (p *pacedWriter) Write(b []byte) (int, error) {
	piece := max(512, min(16<<10, p.minRate))
	written := 0
	for len(b) > 0 {
		part := b[:min(piece, len(b))]
		start := time.Now()
		_ = p.conn.SetWriteDeadline(start.Add(slowReaderWindow))
		n, err := p.w.Write(part)
		p.waited += time.Since(start)
		p.taken += n
		written += n
		if err != nil {
			return written, err
		}
		if p.waited >= slowReaderWindow {
			if float64(p.taken) < float64(p.minRate)*p.waited.Seconds() {
				return written, errSlowReader
			}
			p.waited, p.taken = 0, 0
		}
		b = b[n:]
	}
	return written, nil
}
