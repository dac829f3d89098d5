package admission

import (
	"net/netip"
	"sync"
	"sync/atomic"
)

// Connections counts the connections open at once, in all and from each client address, and
// refuses a connection over either bound as it is accepted (§ 19: max_connections,
// max_connections_per_address). Every open connection holds a goroutine and its buffers
// whatever it sends; without a bound, sockets that send nothing would hold them all.
type Connections struct {
	max, perAddress int
	// exempt addresses are counted in the total only: a trusted reverse proxy carries the
	// connections of many clients.
	exempt func(netip.Addr) bool

	mu        sync.Mutex
	open      int
	byAddress map[netip.Addr]int

	refused atomic.Int64
}

// NewConnections bounds connections to max in all and perAddress from one address; exempt
// (nil for none) names the addresses counted in the total only.
func NewConnections(max, perAddress int, exempt func(netip.Addr) bool) *Connections {
	return &Connections{max: max, perAddress: perAddress, exempt: exempt, byAddress: map[netip.Addr]int{}}
}

// Open admits one connection from addr. When it is admitted, release must be called once the
// connection is closed (more calls do nothing); when it is not, the caller closes it at once.
func (c *Connections) Open(addr netip.Addr) (release func(), ok bool) {
	addr = addr.Unmap()
	counted := c.exempt == nil || !c.exempt(addr)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.open >= c.max || (counted && c.byAddress[addr] >= c.perAddress) {
		c.refused.Add(1)
		return nil, false
	}
	c.open++
	if counted {
		c.byAddress[addr]++
	}
	var once sync.Once
	return func() { once.Do(func() { c.close(addr, counted) }) }, true
}

func (c *Connections) close(addr netip.Addr, counted bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.open--
	if counted {
		if c.byAddress[addr]--; c.byAddress[addr] <= 0 {
			delete(c.byAddress, addr)
		}
	}
}

// Count is how many connections are open now.
func (c *Connections) Count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.open
}

// From is how many connections from addr are open now (0 for an exempt address).
func (c *Connections) From(addr netip.Addr) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.byAddress[addr.Unmap()]
}

// Refused is how many connections were refused since the counter was made.
func (c *Connections) Refused() int64 { return c.refused.Load() }
