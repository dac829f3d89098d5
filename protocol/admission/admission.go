// Package admission is the one place that decides how much work the server takes on at once
// (PROTOCOL.md § 19). Every route names a Class where it is registered; work of a class runs
// only while it holds one of the class's slots. A slot is taken at once when one is free,
// otherwise after a short bounded wait, otherwise the work is refused as busy and the caller
// is told when to retry — better to do fewer things quickly than all of them slowly.
//
// The heavy classes (password hashing, exports, drawings, imports) are sized from the memory
// the process may use (GOMEMLIMIT), each slot standing for what one such piece of work may
// hold; the light classes (reads and writes of one page) from the number of CPUs. One holder
// (an identity, or the address of a caller without one) holds at most PerHolder heavy slots
// at once, so that no one caller takes every slot of a class.
//
// The package knows nothing of HTTP, MCP or the protocol's reasons: transports and the
// operation layer translate its refusals (Busy) into theirs.
package admission

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// Class is a kind of work, with a capacity of its own. The zero Class is none: a route that
// has not declared its class, which a test of every route's table finds.
type Class int

const (
	// Read is a read answered within one page: a thread, a list, a search, a page.
	Read Class = iota + 1
	// Write is a write of one request: a send, a stance, a mark.
	Write
	// Password is one argon2id hash or check (64 MiB while it runs).
	Password
	// Export is one export streamed from a snapshot (a long read on the export pool).
	Export
	// Drawing is one graph drawn to SVG.
	Drawing
	// Import is one import read, checked and written.
	Import
	// Listen is a request that waits for news: a long poll, a feed. It takes no slot of the
	// gate — it holds little while it waits, and for long — and is bounded by the counts of
	// waiters of its own (inbox_waits_per_identity, inbox_waits_max), which its operation
	// keeps.
	Listen

	classCount
)

// Classes lists every class, in order.
func Classes() []Class {
	out := make([]Class, 0, classCount)
	for c := Read; c < classCount; c++ {
		out = append(out, c)
	}
	return out
}

// Declared reports whether c is one of the classes, not the zero Class of a route that
// declared none.
func (c Class) Declared() bool { return c >= Read && c < classCount }

// Heavy reports whether work of the class is counted against its holder's share.
func (c Class) Heavy() bool { return c >= Password && c <= Import }

// Light reports whether work of the class takes a slot of the gate without a holder's share:
// a read or a write of one request, admitted where its route is served.
func (c Class) Light() bool { return c == Read || c == Write }

// Gated reports whether work of the class takes a slot of the gate at all (Listen does not).
func (c Class) Gated() bool { return c.Light() || c.Heavy() }

// String is the class's name, as the configuration, the manifest and the metrics spell it.
func (c Class) String() string {
	switch c {
	case Read:
		return "read"
	case Write:
		return "write"
	case Password:
		return "password"
	case Export:
		return "export"
	case Drawing:
		return "drawing"
	case Import:
		return "import"
	case Listen:
		return "listen"
	case 0:
		return "none"
	}
	return fmt.Sprintf("class(%d)", int(c))
}

// ClassByName is the class of a name String returns.
func ClassByName(name string) (Class, bool) {
	for _, c := range Classes() {
		if c.String() == name {
			return c, true
		}
	}
	return 0, false
}

// Busy is the refusal of work that found no slot: every slot of its class stayed taken for
// the whole wait, or its holder already holds its share. RetryAfter is a whole number of
// seconds after which a retry may find one.
type Busy struct {
	Class      Class
	RetryAfter int
	// HolderFull: the holder holds PerHolder heavy slots already (it, not the server, is busy).
	HolderFull bool
	Capacity   int
	PerHolder  int
}

func (b *Busy) Error() string {
	if b.HolderFull {
		return fmt.Sprintf("%d heavy tasks (exports, drawings, imports, password checks) of this caller are running already; retry in %d seconds, when one has ended",
			b.PerHolder, b.RetryAfter)
	}
	return fmt.Sprintf("the server is busy: all %d places for %s work are taken; retry in %d seconds",
		b.Capacity, b.Class, b.RetryAfter)
}

// Gate admits work by class. Its zero value is not usable; New makes one.
type Gate struct {
	cfg   Config
	slots [classCount]chan struct{}

	mu      sync.Mutex
	holders map[string]int // heavy slots held, by holder
}

// New makes a gate with cfg's capacities (zero fields take the defaults of Config).
func New(cfg Config) *Gate {
	cfg = cfg.withDefaults()
	g := &Gate{cfg: cfg, holders: map[string]int{}}
	for _, c := range Classes() {
		g.slots[c] = make(chan struct{}, cfg.Capacity[c])
	}
	return g
}

// Config is the gate's configuration as it is in force.
func (g *Gate) Config() Config { return g.cfg }

// Capacity is how many pieces of work of class run at once.
func (g *Gate) Capacity(c Class) int { return cap(g.slots[c]) }

// InUse is how many slots of class are taken now.
func (g *Gate) InUse(c Class) int { return len(g.slots[c]) }

// Acquire takes a slot of class for holder ("" for work not counted against anyone's share),
// waiting at most the configured wait and never past ctx. The returned release gives the
// slot back; it may be called more than once. The error is a *Busy, or ctx's error when ctx
// ended first.
//
// A class without slots (Listen) is admitted at once: what bounds it is counted elsewhere.
func (g *Gate) Acquire(ctx context.Context, c Class, holder string) (release func(), err error) {
	if !c.Gated() {
		return func() {}, nil
	}
	counted := c.Heavy() && holder != ""
	if counted {
		if refusal := g.takeShare(c, holder); refusal != nil {
			return nil, refusal
		}
	}
	giveShare := func() {
		if counted {
			g.giveShare(holder)
		}
	}
	slots := g.slots[c]
	select {
	case slots <- struct{}{}:
		return g.releaser(slots, giveShare), nil
	default:
	}
	timer := time.NewTimer(g.cfg.Wait)
	defer timer.Stop()
	select {
	case slots <- struct{}{}:
		return g.releaser(slots, giveShare), nil
	case <-timer.C:
		giveShare()
		return nil, &Busy{Class: c, RetryAfter: g.cfg.RetryAfter[c], Capacity: cap(slots), PerHolder: g.cfg.PerHolder}
	case <-ctx.Done():
		giveShare()
		return nil, ctx.Err()
	}
}

func (g *Gate) releaser(slots chan struct{}, giveShare func()) func() {
	var once sync.Once
	return func() {
		once.Do(func() {
			<-slots
			giveShare()
		})
	}
}

func (g *Gate) takeShare(c Class, holder string) *Busy {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.holders[holder] >= g.cfg.PerHolder {
		return &Busy{Class: c, RetryAfter: g.cfg.RetryAfter[c], HolderFull: true, Capacity: cap(g.slots[c]), PerHolder: g.cfg.PerHolder}
	}
	g.holders[holder]++
	return nil
}

func (g *Gate) giveShare(holder string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.holders[holder]--; g.holders[holder] <= 0 {
		delete(g.holders, holder)
	}
}

// Held is how many heavy slots holder holds now.
func (g *Gate) Held(holder string) int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.holders[holder]
}
