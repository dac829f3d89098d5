package web

import (
	"net"
	"net/netip"
	"time"

	"github.com/parleyforum/parley/protocol"
	"github.com/parleyforum/parley/protocol/admission"
)

// What one client can make the server hold by opening connections (PROTOCOL.md § 19): the
// listener refuses connections over max_connections in all and max_connections_per_address
// from one address as it accepts them, holds every write to the pace of a reader taking
// min_read_bytes_per_second (pacing.go), and closes connections gracefully
// (graceful_close.go).

// ListenerOptions bound the connections of a Listener.
type ListenerOptions struct {
	// Limits give max_connections, max_connections_per_address and
	// min_read_bytes_per_second; the zero value means protocol.DefaultLimits().
	Limits protocol.Limits
	// TrustedProxies are the reverse proxies (Options.TrustedProxies): their connections
	// carry many clients', and count in max_connections only.
	TrustedProxies []netip.Prefix
	// SlowReaderGrace is how far behind min_read_bytes_per_second a reader may fall before
	// its connection is cut; 0 means SlowReaderGrace (§ 19's 10 s).
	SlowReaderGrace time.Duration
	// Metrics, when given, count the connections open and refused (the app's Metrics).
	Metrics *Metrics
}

// SlowReaderGrace is § 19's: a reader slower than min_read_bytes_per_second for this long is
// cut off.
const SlowReaderGrace = 10 * time.Second

// Listener wraps ln for the app under the reference limits of PROTOCOL.md § 8; serve the app
// with app.Listener(web.Listener(ln)). ListenerWith takes other limits.
func Listener(ln net.Listener) net.Listener { return ListenerWith(ln, ListenerOptions{}) }

// ListenerWith wraps ln for the app under opts.
func ListenerWith(ln net.Listener, opts ListenerOptions) net.Listener {
	if opts.Limits == (protocol.Limits{}) {
		opts.Limits = protocol.DefaultLimits()
	}
	if opts.SlowReaderGrace <= 0 {
		opts.SlowReaderGrace = SlowReaderGrace
	}
	trusted := opts.TrustedProxies
	conns := admission.NewConnections(opts.Limits.MaxConnections, opts.Limits.MaxConnectionsPerAddress,
		func(a netip.Addr) bool { return isTrusted(a, trusted) })
	if opts.Metrics != nil {
		opts.Metrics.watchConnections(conns)
	}
	return &boundedListener{Listener: ln, conns: conns, rate: opts.Limits.MinReadBytesPerSecond, grace: opts.SlowReaderGrace}
}

type boundedListener struct {
	net.Listener
	conns *admission.Connections
	rate  int
	grace time.Duration
}

// Accept gives the server the next connection within the bounds; one over them is closed as
// it is accepted, before anything of it is read.
func (l *boundedListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return c, err
		}
		tcp, ok := c.(*net.TCPConn)
		if !ok {
			return c, nil
		}
		release, admitted := l.conns.Open(peerAddr(tcp))
		if !admitted {
			_ = tcp.Close()
			continue
		}
		return &gracefulConn{TCPConn: tcp, release: release, pace: newPacing(l.rate, l.grace)}, nil
	}
}

// peerAddr is the address a connection comes from.
func peerAddr(c net.Conn) netip.Addr {
	if ap, err := netip.ParseAddrPort(c.RemoteAddr().String()); err == nil {
		return ap.Addr().Unmap()
	}
	return netip.Addr{}
}
