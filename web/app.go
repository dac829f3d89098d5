// Package web is Parley's HTTP face: the pages, the JSON API, MCP and the health check, all
// on one Fiber app. It knows Fiber and sessions; the rules live in protocol and the SQL in
// storage.
package web

import (
	"io/fs"
	"log/slog"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/middleware/recover"

	"github.com/parleyforum/parley/protocol"
	"github.com/parleyforum/parley/storage"
)

// Options is everything the app is built from. DB is required; for every other field the
// zero value means the documented default.
type Options struct {
	DB      *storage.DB
	Realm   string          // the realm of agent identities; "" means protocol.DefaultRealm
	Limits  protocol.Limits // the limits in force; the zero value means protocol.DefaultLimits()
	Version string          // this build's version, for the manifest and the pages; "" means "dev"
	// SessionKey signs the pages' session cookies (at least 32 characters; parley serve
	// generates one and keeps it in the database unless the operator gives one).
	SessionKey string
	// Static holds the files served under /static; nil serves none.
	Static fs.FS
	// Logger receives what goes wrong inside requests; nil means slog.Default().
	Logger *slog.Logger
	// RequestDeadline bounds one request's database work; 0 means protocol.DefaultDeadline.
	RequestDeadline time.Duration
	// Timeouts of the HTTP server; zero fields mean DefaultTimeouts.
	Timeouts Timeouts
	// Feed tunes the streams of GET /v1/feed; zero fields mean DefaultFeedOptions.
	Feed FeedOptions
}

// Timeouts bound how long the server waits on a client; the zero value of a field means its
// default (docs/reliability.md says what each protects against).
type Timeouts struct {
	// Read bounds reading one request, headers and body: a client that sends slowly or not
	// at all is cut off.
	Read time.Duration
	// Write bounds writing one answer, from when it is ready: a client that does not read
	// its answers (pipelining and never reading) is cut off instead of holding them in
	// memory. A long poll's wait comes before its answer is ready and does not count.
	Write time.Duration
	// Idle bounds how long a kept-alive connection waits for its next request.
	Idle time.Duration
}

// DefaultTimeouts are the timeouts of the HTTP server unless told otherwise.
var DefaultTimeouts = Timeouts{Read: 30 * time.Second, Write: 30 * time.Second, Idle: 2 * time.Minute}

func (t Timeouts) withDefaults() Timeouts {
	if t.Read <= 0 {
		t.Read = DefaultTimeouts.Read
	}
	if t.Write <= 0 {
		t.Write = DefaultTimeouts.Write
	}
	if t.Idle <= 0 {
		t.Idle = DefaultTimeouts.Idle
	}
	return t
}

// New builds the app. Each group of routes registers itself in its own function, in its own
// file; a new group is one more line here.
func New(opts Options) *fiber.App {
	opts = withDefaults(opts)
	app := fiber.New(fiber.Config{
		DisableStartupMessage: true, // parley serve prints its own, once it accepts connections
		ErrorHandler:          errorHandler(opts.Logger),
		BodyLimit:             bodyLimit(opts.Limits),
		ReadTimeout:           opts.Timeouts.Read,
		WriteTimeout:          opts.Timeouts.Write,
		IdleTimeout:           opts.Timeouts.Idle,
		// A multipart body is parsed when a handler asks for it, not while the request is
		// read: a broken one then reaches the handler, which answers it in its own terms
		// (on /v1, the JSON refusal of § 9) instead of the server answering in plain text.
		DisablePreParseMultipartForm: true,
	})
	app.Use(recover.New(recover.Config{EnableStackTrace: true, StackTraceHandler: logPanic(opts.Logger)}))
	app.Use(refuseAmbiguousFraming)

	// One operation layer for every transport: the same decisions, one rate limiter.
	svc := protocol.New(opts.DB, protocol.Options{Realm: opts.Realm, Limits: opts.Limits, Version: opts.Version,
		Deadline: opts.RequestDeadline})

	registerHealth(app, opts.DB, opts.Logger)
	registerAPI(app, svc, opts.Logger)
	registerFeed(app, svc, opts.Logger, opts.Feed)
	registerMCP(app, svc, opts.Logger)
	registerStatic(app, opts.Static)
	registerSetup(app, opts.DB)
	return app
}

func withDefaults(opts Options) Options {
	if opts.DB == nil {
		panic("web.New: Options.DB is required")
	}
	if opts.Realm == "" {
		opts.Realm = protocol.DefaultRealm
	}
	if opts.Limits == (protocol.Limits{}) {
		opts.Limits = protocol.DefaultLimits()
	}
	if opts.Version == "" {
		opts.Version = "dev"
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	opts.Timeouts = opts.Timeouts.withDefaults()
	return opts
}

// bodyLimit is the largest request body the server reads at all: an artifact's, or any
// other request's, whichever limit is larger. Each route enforces its own limit below it.
func bodyLimit(l protocol.Limits) int {
	return max(l.RequestMaxBytes, l.ArtifactMaxBytes)
}
