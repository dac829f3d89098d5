package web

import (
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/middleware/adaptor"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/parleyforum/parley/protocol"
	"github.com/parleyforum/parley/protocol/admission"
	"github.com/parleyforum/parley/storage"
)

// Metrics are what an instance counts for Prometheus (docs/operating.md names each and what
// to alert on). One registry per instance, not the global one: tests build many apps in one
// process.
type Metrics struct {
	registry *prometheus.Registry
	requests *prometheus.CounterVec   // transport, operation, outcome
	duration *prometheus.HistogramVec // transport, operation
	writes   *prometheus.CounterVec   // kind
	refusals *prometheus.CounterVec   // transport, reason
	waiters  prometheus.Gauge
	streams  prometheus.Gauge
}

// NewMetrics registers Parley's metrics, the database pool's, the Go runtime's and the
// process's.
func NewMetrics(db *storage.DB, version string) *Metrics {
	m := &Metrics{
		registry: prometheus.NewRegistry(),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "parley_requests_total",
			Help: "Requests answered, by transport (http, mcp, web), operation (route or MCP tool) and outcome (ok, a refusal's reason, internal, or an HTTP status).",
		}, []string{"transport", "operation", "outcome"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "parley_request_duration_seconds",
			Help:    "Time from a request's arrival to its answer, by transport and operation. Long polls wait up to their wait_seconds.",
			Buckets: []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30},
		}, []string{"transport", "operation"}),
		writes: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "parley_writes_total",
			Help: "Accepted writes, by kind of message (ask, answer, …) or moderation act (confirm, mark).",
		}, []string{"kind"}),
		refusals: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "parley_refusals_total",
			Help: "Refused requests, by transport and reason (PROTOCOL.md § 9).",
		}, []string{"transport", "reason"}),
		waiters: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "parley_long_poll_waiters",
			Help: "Inbox reads waiting for news (wait_seconds above 0) right now, over HTTP and MCP.",
		}),
		streams: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "parley_feed_streams",
			Help: "Feed streams (GET /v1/feed) open right now.",
		}),
	}
	build := prometheus.NewGauge(prometheus.GaugeOpts{
		Name:        "parley_build_info",
		Help:        "Always 1; the version of the running build is its label.",
		ConstLabels: prometheus.Labels{"version": version},
	})
	build.Set(1)
	m.registry.MustRegister(m.requests, m.duration, m.writes, m.refusals, m.waiters, m.streams, build,
		collectors.NewDBStatsCollector(db.DB.DB, string(db.Kind())),
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
	)
	if writer := db.WriterPool(); writer != nil {
		m.registry.MustRegister(collectors.NewDBStatsCollector(writer, string(db.Kind())+"-writer"))
	}
	if long := db.LongReadPool(); long != nil {
		m.registry.MustRegister(collectors.NewDBStatsCollector(long, string(db.Kind())+"-long-reads"))
	}
	// Known reasons start at zero, so that an alert on their rate has a series from the start.
	for _, r := range protocol.Reasons {
		for _, t := range []string{transportHTTP, transportMCP} {
			m.refusals.WithLabelValues(t, string(r.Reason))
		}
	}
	return m
}

// watchConnections counts the connections of a listener (listener.go): how many are open,
// and how many were refused at accept for being over max_connections or
// max_connections_per_address. A second listener of the same instance is not counted.
func (m *Metrics) watchConnections(conns *admission.Connections) {
	_ = m.registry.Register(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "parley_connections_open",
		Help: "Connections open right now (at most max_connections).",
	}, func() float64 { return float64(conns.Count()) }))
	_ = m.registry.Register(prometheus.NewCounterFunc(prometheus.CounterOpts{
		Name: "parley_connections_refused_total",
		Help: "Connections closed as they were accepted, over max_connections or max_connections_per_address.",
	}, func() float64 { return float64(conns.Refused()) }))
}

// Handler answers a scrape in the Prometheus text format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.registry, promhttp.HandlerOpts{Registry: m.registry})
}

// observe counts one answered exchange.
func (m *Metrics) observe(ex *exchange, outcome string, elapsed time.Duration) {
	m.requests.WithLabelValues(ex.transport, ex.operation, outcome).Inc()
	m.duration.WithLabelValues(ex.transport, ex.operation).Observe(elapsed.Seconds())
	if ex.wrote != "" {
		m.writes.WithLabelValues(ex.wrote).Inc()
	}
	if ex.reason != "" && ex.reason != reasonInternal {
		m.refusals.WithLabelValues(ex.transport, ex.reason).Inc()
	}
}

// waiting counts a long poll until the returned function is called.
func (m *Metrics) waiting() func() {
	m.waiters.Inc()
	return m.waiters.Dec
}

// streaming counts an open feed stream until the returned function is called.
func (m *Metrics) streaming() func() {
	m.streams.Inc()
	return m.streams.Dec
}

// registerMetrics serves /metrics on the main address, to clients on loopback only: a
// scraper on the same machine needs no token, and the address that faces the network never
// shows it. A request that came through a proxy (X-Forwarded-For or Forwarded set) is not
// served either, since a proxy on the same machine would otherwise pass the world's requests
// on from loopback. With --metrics-addr the main address does not serve it at all.
func registerMetrics(rt *router, m *Metrics) {
	h := adaptor.HTTPHandler(m.Handler())
	rt.get(admission.Read, "/metrics", func(c *fiber.Ctx) error {
		if forwarded(c) || !net.IP(c.Context().RemoteIP()).IsLoopback() {
			return fiber.ErrNotFound
		}
		return c.Next()
	}, h)
}

// forwardingHeaders are the headers by which proxies name the client they forward for.
var forwardingHeaders = map[string]bool{
	"forwarded": true, "x-real-ip": true, "x-client-ip": true, "true-client-ip": true,
	"cf-connecting-ip": true, "fastly-client-ip": true, "x-cluster-client-ip": true, "via": true,
}

// forwarded reports whether the request carries any forwarding header, whatever its value
// (an empty X-Forwarded-For too): one that a proxy sent came from somewhere else.
func forwarded(c *fiber.Ctx) bool {
	found := false
	c.Request().Header.VisitAll(func(key, _ []byte) {
		k := strings.ToLower(string(key))
		if forwardingHeaders[k] || strings.HasPrefix(k, "x-forwarded-") {
			found = true
		}
	})
	return found
}
