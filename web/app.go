// Package web is Parley's HTTP face: the pages, the JSON API, MCP and the health check, all
// on one Fiber app. It knows Fiber and sessions; the rules live in protocol and the SQL in
// storage.
package web

import (
	"io/fs"
	"log/slog"
	"net/netip"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/middleware/recover"

	"github.com/parleyforum/parley/graph"
	"github.com/parleyforum/parley/protocol"
	"github.com/parleyforum/parley/reputation"
	"github.com/parleyforum/parley/signed"
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
	// RealmKey signs key bindings and exports (PROTOCOL.md § 14); nil means the key kept in
	// the database, created there on first use (parley serve loads it before it listens).
	RealmKey *signed.Signer
	// TrustRealms are the realms whose exports POST /v1/imports takes (PROTOCOL.md § 14),
	// name → realm key; none by default.
	TrustRealms map[string]string
	// PublicRead lets everyone read the pages without signing in; acting always needs a login.
	PublicRead bool
	// Static holds the files served under /static; nil serves none.
	Static fs.FS
	// Logger receives the access log and what goes wrong inside requests; nil means
	// slog.Default(). Lines logged in a request carry its request_id.
	Logger *slog.Logger
	// TrustedProxies are the reverse proxies whose X-Forwarded-For and X-Forwarded-Proto are
	// believed (client_address.go); none by default.
	TrustedProxies []netip.Prefix
	// Metrics counts requests; nil means a fresh set. MetricsElsewhere leaves /metrics off
	// the app, for an instance that serves Metrics.Handler on an address of its own.
	Metrics          *Metrics
	MetricsElsewhere bool
	// RequestDeadline bounds one request's database work; 0 means protocol.DefaultDeadline.
	RequestDeadline time.Duration
	// Timeouts of the HTTP server; zero fields mean DefaultTimeouts.
	Timeouts Timeouts
	// Feed tunes the streams of GET /v1/feed; zero fields mean DefaultFeedOptions.
	Feed FeedOptions
	// Renderer draws the claim graph's pictures; nil means a graph.Renderer of its own.
	Renderer *graph.Renderer
	// Clock is the time of the pages and of what the reputation policy derives from it (a
	// claim's expiry, the health page's periods); nil means storage.Now. Tests set a known
	// date.
	Clock func() time.Time
}

// New builds the app. Each group of routes registers itself in its own function, in its own
// file; a new group is one more line here.
func New(opts Options) *fiber.App {
	app, _ := build(opts)
	return app
}

// build is New, with the router that registered the routes and their admission classes.
func build(opts Options) (*fiber.App, *router) {
	opts = withDefaults(opts)
	// One operation layer for every transport: the same decisions, one rate limiter.
	svc := protocol.New(opts.DB, protocol.Options{Realm: opts.Realm, Limits: opts.Limits, Version: opts.Version,
		Deadline: opts.RequestDeadline, RealmKey: opts.RealmKey, TrustRealms: opts.TrustRealms,
		Policies: []protocol.PolicyInfo{{Name: "reputation", Version: reputation.Evidence1Name}}})
	// The instance's reputation policy (§ 17), beside the protocol, never inside it.
	rep := reputation.New(svc, reputation.Options{Now: opts.Clock})

	// The pages exist before the app: its error handler answers with their error pages.
	p := newPages(svc, rep, opts)
	app := fiber.New(fiber.Config{
		DisableStartupMessage: true, // parley serve prints its own, once it accepts connections
		ErrorHandler:          errorHandler(opts.Logger, p),
		// Bodies are read as they arrive, by the handler that takes one, bounded by its
		// route's limit (body.go): never into a buffer reserved from a declared
		// Content-Length (PROTOCOL.md § 19). The server reads the first byte of a body
		// before the handler runs and leaves the rest to it, so that a body declared over
		// its route's limit is refused at once, not after the part the server would read.
		StreamRequestBody: true,
		BodyLimit:         1,
		ReadTimeout:       opts.Timeouts.Read,
		WriteTimeout:      opts.Timeouts.Write,
		IdleTimeout:       opts.Timeouts.Idle,
		// A multipart body is parsed when a handler asks for it, not while the request is
		// read: a broken one then reaches the handler, which answers it in its own terms
		// (on /v1, the JSON refusal of § 9) instead of the server answering in plain text.
		DisablePreParseMultipartForm: true,
		// X-Forwarded-Proto (c.Protocol) only from the trusted proxies; client_address.go
		// does the same for the client's address.
		EnableTrustedProxyCheck: true,
		TrustedProxies:          proxyList(opts.TrustedProxies),
	})
	refuseUnknownMethods(app, opts.Logger, opts.Metrics)
	app.Use(func(c *fiber.Ctx) error {
		// Every answer, static files and the plain 404 included, is read as the type it says.
		c.Set(fiber.HeaderXContentTypeOptions, "nosniff")
		return c.Next()
	})
	app.Use(resolveClientAddress(opts.TrustedProxies))
	app.Use(observeExchanges(opts.Logger, opts.Metrics))
	app.Use(recover.New(recover.Config{EnableStackTrace: true, StackTraceHandler: logPanic(opts.Logger)}))
	app.Use(refuseAmbiguousFraming)
	app.Use(refuseInvalidHost)

	rt := newRouter(app, svc)
	registerHealth(rt, opts.DB, opts.Logger)
	if !opts.MetricsElsewhere {
		registerMetrics(rt, opts.Metrics)
	}
	registerAPI(rt, svc, opts.Logger, opts.Metrics, append(identityRoutes(rep), schemaRoutes(svc)...)...)
	registerFeed(rt, svc, opts.Logger, opts.Metrics, opts.Feed)
	registerExport(rt, svc, opts.Logger, opts.Metrics)
	registerMCP(rt, svc, opts.Logger, opts.Metrics, identityTools(rep)...)
	registerStatic(rt, opts.Static)
	p.register(rt)
	return app, rt
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
	opts.Logger = slog.New(withRequestIDs{opts.Logger.Handler()})
	if opts.Metrics == nil {
		opts.Metrics = NewMetrics(opts.DB, opts.Version)
	}
	opts.Timeouts = opts.Timeouts.withDefaults()
	if opts.Clock == nil {
		opts.Clock = storage.Now
	}
	return opts
}
