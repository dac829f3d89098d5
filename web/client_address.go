package web

import (
	"bytes"
	"net/netip"
	"strings"

	"github.com/gofiber/fiber/v2"
)

// The address of the client behind the reverse proxies the operator trusts
// (--trusted-proxies). Only a trusted proxy's X-Forwarded-For is believed: anyone else could
// write any address into it. The scheme (X-Forwarded-Proto, for Secure cookies) follows the
// same trust through Fiber's own check, which New switches on with the same list, so that
// c.Protocol() is "https" only when the connection or a trusted proxy says so.

// clientAddressKey holds a request's client address in its Locals.
type clientAddressKey struct{}

// clientAddress is the address of the client that made the request: the connection's peer,
// or the address the trusted proxies in front of it saw. Rate limits and logs use it.
func clientAddress(c *fiber.Ctx) string {
	if a, ok := c.Locals(clientAddressKey{}).(string); ok {
		return a
	}
	return c.IP()
}

// resolveClientAddress finds the client address of every request once, before any handler
// asks for it.
func resolveClientAddress(trusted []netip.Prefix) fiber.Handler {
	return func(c *fiber.Ctx) error {
		if len(trusted) > 0 {
			peer, _ := netip.AddrFromSlice(c.Context().RemoteIP())
			forwarded := c.Request().Header.PeekAll(fiber.HeaderXForwardedFor)
			c.Locals(clientAddressKey{}, realClient(peer.Unmap(), forwarded, trusted).String())
		}
		return c.Next()
	}
}

// realClient walks the chain of addresses from the peer back towards the client: each proxy
// appends the address it got the request from to X-Forwarded-For, so from the right, the
// first address not of a trusted proxy is the client. A chain of only trusted proxies ends
// at its leftmost address; an entry that is not an address stops the walk at the last one
// that was (whoever wrote it is not to be believed).
func realClient(peer netip.Addr, forwardedFor [][]byte, trusted []netip.Prefix) netip.Addr {
	client := peer
	if !isTrusted(client, trusted) {
		return client
	}
	hops := strings.Split(string(bytes.Join(forwardedFor, []byte(","))), ",")
	for i := len(hops) - 1; i >= 0; i-- {
		hop := strings.TrimSpace(hops[i])
		if hop == "" {
			continue
		}
		a, err := netip.ParseAddr(hop)
		if err != nil {
			return client
		}
		client = a.Unmap()
		if !isTrusted(client, trusted) {
			return client
		}
	}
	return client
}

func isTrusted(a netip.Addr, trusted []netip.Prefix) bool {
	for _, p := range trusted {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// proxyList is trusted as Fiber's TrustedProxies spells it, for its check of the scheme.
func proxyList(trusted []netip.Prefix) []string {
	list := make([]string, len(trusted))
	for i, p := range trusted {
		list[i] = p.String()
	}
	return list
}
