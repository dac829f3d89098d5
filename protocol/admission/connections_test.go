package admission

import (
	"net/netip"
	"testing"
)

func TestConnectionsAreBoundedInAllAndPerAddress(t *testing.T) {
	proxy := netip.MustParseAddr("10.0.0.1")
	conns := NewConnections(5, 2, func(a netip.Addr) bool { return a == proxy })
	a, b := netip.MustParseAddr("192.0.2.1"), netip.MustParseAddr("::ffff:192.0.2.2")

	var releases []func()
	open := func(addr netip.Addr, want bool) {
		t.Helper()
		release, ok := conns.Open(addr)
		if ok != want {
			t.Fatalf("a connection from %s with %d open (%d from it): admitted %v, want %v", addr, conns.Count(), conns.From(addr), ok, want)
		}
		if ok {
			releases = append(releases, release)
		}
	}
	open(a, true)
	open(a, true)
	open(a, false) // its third: over max_connections_per_address
	open(b, true)
	open(netip.MustParseAddr("192.0.2.2"), true) // the same address, not mapped
	open(b, false)
	open(proxy, true)  // a trusted proxy counts in the total only
	open(proxy, false) // the sixth in all: over max_connections
	if conns.Refused() != 3 {
		t.Errorf("%d refusals counted, want 3", conns.Refused())
	}

	releases[0]()
	releases[0]() // twice is harmless
	if conns.Count() != 4 || conns.From(a) != 1 {
		t.Errorf("after one of a's closed: %d open, %d from a; want 4 and 1", conns.Count(), conns.From(a))
	}
	open(a, true)
	for _, release := range releases {
		release()
	}
	if conns.Count() != 0 || conns.From(a) != 0 || conns.From(b) != 0 {
		t.Errorf("after every connection closed: %d open, %d from a, %d from b", conns.Count(), conns.From(a), conns.From(b))
	}
}
