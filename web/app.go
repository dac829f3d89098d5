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
	// PublicRead lets everyone read the pages without signing in; acting always needs a login.
	PublicRead bool
	// Static holds the files served under /static; nil serves none.
	Static fs.FS
	// Logger receives what goes wrong inside requests; nil means slog.Default().
	Logger *slog.Logger
}

// Timeouts of the HTTP server. There is no write timeout: the feed streams for as long as
// its reader listens, and long polls wait up to inbox_max_wait_seconds.
const (
	readTimeout = 30 * time.Second
	idleTimeout = 2 * time.Minute
)

// New builds the app. Each group of routes registers itself in its own function, in its own
// file; a new group is one more line here.
func New(opts Options) *fiber.App {
	opts = withDefaults(opts)
	app := fiber.New(fiber.Config{
		DisableStartupMessage: true, // parley serve prints its own, once it accepts connections
		ErrorHandler:          errorHandler(opts.Logger),
		BodyLimit:             bodyLimit(opts.Limits),
		ReadTimeout:           readTimeout,
		IdleTimeout:           idleTimeout,
	})
	app.Use(recover.New(recover.Config{EnableStackTrace: true, StackTraceHandler: logPanic(opts.Logger)}))

	// One operation layer for every transport: the same decisions, one rate limiter.
	svc := protocol.New(opts.DB, protocol.Options{Realm: opts.Realm, Limits: opts.Limits, Version: opts.Version})

	registerHealth(app, opts.DB, opts.Logger)
	registerAPI(app, svc, opts.Logger)
	registerMCP(app, svc, opts.Logger)
	registerStatic(app, opts.Static)
	registerPages(app, svc, opts)
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
	return opts
}

// bodyLimit is the largest request body the server reads at all: an artifact's, or any
// other request's, whichever limit is larger. Each route enforces its own limit below it.
func bodyLimit(l protocol.Limits) int {
	return max(l.RequestMaxBytes, l.ArtifactMaxBytes)
}
