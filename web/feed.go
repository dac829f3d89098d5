package web

import (
	"bufio"
	"context"
	"encoding/json"
	"log/slog"
	"net"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/parleyforum/parley/protocol"
	"github.com/parleyforum/parley/protocol/admission"
)

// GET /v1/feed (§ 13): the feed as Server-Sent Events. Each listener has two halves joined
// by a bounded buffer: one reads the feed from the database as fast as the buffer takes it,
// the other writes the buffer to the connection. A slow listener therefore holds back only
// itself: nothing that writes or other listeners wait for it, and what it has not taken yet
// stays in the database, not in memory. One that does not take a frame for FeedOptions.SlowAfter
// is too far behind: it is given what is buffered, then a resume event with the cursor of the
// last event it was given, and the stream ends; it comes back with that cursor.

// FeedOptions tune the feed's streams; the zero value of a field means its default.
type FeedOptions struct {
	Heartbeat    time.Duration // a comment line at least this often keeps proxies from closing an idle stream
	Buffer       int           // events buffered for one listener
	SlowAfter    time.Duration // a listener that takes no event for this long while more wait is too far behind
	WriteTimeout time.Duration // a write the listener does not take within this ends its stream
	SocketBuffer int           // bytes the system buffers for one listener's connection
}

// DefaultFeedOptions are the feed's defaults.
var DefaultFeedOptions = FeedOptions{Heartbeat: 15 * time.Second, Buffer: 256, SlowAfter: 10 * time.Second,
	WriteTimeout: 30 * time.Second, SocketBuffer: 64 << 10}

func (o FeedOptions) withDefaults() FeedOptions {
	d := DefaultFeedOptions
	if o.Heartbeat <= 0 {
		o.Heartbeat = d.Heartbeat
	}
	if o.Buffer <= 0 {
		o.Buffer = d.Buffer
	}
	if o.SlowAfter <= 0 {
		o.SlowAfter = d.SlowAfter
	}
	if o.WriteTimeout <= 0 {
		o.WriteTimeout = d.WriteTimeout
	}
	if o.SocketBuffer <= 0 {
		o.SocketBuffer = d.SocketBuffer
	}
	return o
}

// feedPage is how many events one read of the database gives at most.
const feedPage = 100

// registerFeed adds GET /v1/feed.
func registerFeed(rt *router, svc *protocol.Service, log *slog.Logger, m *Metrics, opts FeedOptions) {
	a := &api{svc: svc, log: log, metrics: m}
	opts = opts.withDefaults()
	rt.get(admission.Listen, "/v1/feed", func(c *fiber.Ctx) error { return a.feed(c, opts) })
	rt.all(admission.Read, "/v1/feed", methodNotAllowed(fiber.MethodGet))
}

// feed checks the request as every route does (§ 9's order), then streams.
func (a *api) feed(c *fiber.Ctx, opts FeedOptions) error {
	ex := exchangeOf(c)
	ex.transport, ex.operation = transportHTTP, "GET /v1/feed"
	bounded, cancel := a.svc.Bounded(c.UserContext())
	defer cancel()
	actor, err := a.admit(c, bounded)
	if err != nil {
		return a.writeError(c, err)
	}
	ex.askedBy(actor)
	raw, bad := feedInput(c)
	if bad != nil && actor != nil {
		return writeRefusal(c, bad)
	}
	feed, err := a.svc.OpenFeed(bounded, actor, raw)
	if err != nil {
		return a.writeError(c, err)
	}
	streamFeed(c, feed, opts, a.log, a.metrics, nil)
	return nil
}

// streamFeed answers c with feed as Server-Sent Events, until the listener or the server
// goes. rename, when given, turns each event into what the listener is told instead (the
// live pages' events); nil sends the feed's own.
func streamFeed(c *fiber.Ctx, feed *protocol.Feed, opts FeedOptions, log *slog.Logger, m *Metrics,
	rename func(protocol.FeedEvent) protocol.FeedEvent) {
	c.Set(fiber.HeaderContentType, "text/event-stream; charset=utf-8")
	c.Set(fiber.HeaderCacheControl, "no-store")
	c.Set(fiber.HeaderXContentTypeOptions, "nosniff")
	c.Set("X-Accel-Buffering", "no") // proxies that buffer answers (nginx) pass this one on at once
	conn := c.Context().Conn()
	if tcp, ok := conn.(interface{ SetWriteBuffer(int) error }); ok { // a TCP connection
		_ = tcp.SetWriteBuffer(opts.SocketBuffer)
	}
	l := &listener{feed: feed, conn: conn, opts: opts, log: log, shutdown: c.Context().Done(), open: m.streaming(), rename: rename}
	c.Context().SetBodyStreamWriter(l.run)
}

// feedInput is the operation's input: the query's fields, with Last-Event-ID, which a
// reconnecting EventSource sends, as since (it wins over a since in the query, which is
// where the stream first began).
func feedInput(c *fiber.Ctx) ([]byte, *protocol.Error) {
	raw, bad := requestInput(c, false, threadPath)
	last := c.Get("Last-Event-ID")
	if bad != nil || last == "" {
		return raw, bad
	}
	fields := map[string]json.RawMessage{}
	if json.Unmarshal(raw, &fields) != nil {
		return raw, nil
	}
	fields["since"], _ = json.Marshal(last)
	raw, _ = json.Marshal(fields)
	return raw, nil
}

// listener is one stream of the feed.
type listener struct {
	feed     *protocol.Feed
	conn     net.Conn
	opts     FeedOptions
	log      *slog.Logger
	shutdown <-chan struct{}
	open     func() // ends the stream's count in the metrics
	rename   func(protocol.FeedEvent) protocol.FeedEvent

	frames chan protocol.FeedEvent
	ended  string // why the reading half stopped: "" (the stream ends), or the reason given with resume
}

// run is the writing half; it starts the reading half and ends it when it returns.
func (l *listener) run(w *bufio.Writer) {
	defer l.open() // the stream is counted as open until it ends
	defer l.feed.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	l.frames = make(chan protocol.FeedEvent, l.opts.Buffer)
	last := l.feed.Cursor() // before the reading half moves it
	go l.read(ctx)
	if !l.write(w, protocol.FeedEvent{Cursor: last, Type: protocol.FeedOpen, Data: cursorData{Cursor: last}}) {
		return
	}
	heartbeat := time.NewTicker(l.opts.Heartbeat)
	defer heartbeat.Stop()
	// A listener that has gone gives its place back now, not at the next heartbeat that fails:
	// a human moving between live pages would otherwise use up the identity's places.
	look := time.NewTicker(clientCheckEvery)
	defer look.Stop()
	for {
		select {
		case <-l.shutdown:
			return
		case <-look.C:
			if clientGone(l.conn) {
				return
			}
		case <-heartbeat.C:
			if !l.send(w, []byte(": heartbeat\n\n")) {
				return
			}
		case ev, open := <-l.frames:
			if !open {
				if l.ended != "" {
					l.write(w, protocol.FeedEvent{Type: protocol.FeedResume, Data: cursorData{Cursor: last, Reason: l.ended}})
				}
				return
			}
			if !l.write(w, ev) {
				return
			}
			last = ev.Cursor
		}
	}
}

// cursorData is the data of the open and resume events.
type cursorData struct {
	Cursor string `json:"cursor"`
	Reason string `json:"reason,omitempty"`
}

// read is the reading half: it moves the feed into the buffer until ctx ends, the buffer
// stays full for SlowAfter (reason "behind") or the database fails (reason "unavailable").
func (l *listener) read(ctx context.Context) {
	defer close(l.frames)
	slow := time.NewTimer(l.opts.SlowAfter)
	defer slow.Stop()
	for ctx.Err() == nil {
		events, err := l.feed.Next(ctx, feedPage, time.Minute)
		if err != nil {
			if ctx.Err() == nil {
				l.log.Warn("feed: reading failed; the listener is told to resume", "err", err)
				l.ended = "unavailable"
			}
			return
		}
		for _, ev := range events {
			slow.Reset(l.opts.SlowAfter)
			select {
			case l.frames <- ev:
			case <-slow.C:
				l.ended = "behind"
				return
			case <-ctx.Done():
				return
			}
		}
	}
}

// write sends one event: its id (none for resume, which is not a place of its own), its
// type and its data as one line of JSON, flushed when nothing else is waiting.
func (l *listener) write(w *bufio.Writer, ev protocol.FeedEvent) bool {
	if l.rename != nil {
		ev = l.rename(ev)
	}
	data, err := json.Marshal(ev.Data)
	if err != nil {
		l.log.Error("feed: an event cannot be written", "err", err)
		return false
	}
	frame := make([]byte, 0, len(data)+len(ev.Cursor)+32)
	if ev.Type != protocol.FeedResume {
		frame = append(append(append(frame, "id: "...), ev.Cursor...), '\n')
	}
	frame = append(append(append(frame, "event: "...), ev.Type...), '\n')
	frame = append(append(append(frame, "data: "...), data...), "\n\n"...)
	return l.send(w, frame)
}

// send writes frame within the write timeout, and flushes unless more frames wait.
func (l *listener) send(w *bufio.Writer, frame []byte) bool {
	_ = l.conn.SetWriteDeadline(time.Now().Add(l.opts.WriteTimeout))
	if _, err := w.Write(frame); err != nil {
		return false
	}
	if len(l.frames) > 0 {
		return true
	}
	return w.Flush() == nil
}
