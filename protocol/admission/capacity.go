package admission

import (
	"math"
	"runtime"
	"runtime/debug"
	"time"
)

// Config sets the gate's capacities. The zero value of a field means its default, derived from
// the machine: Capacities sums up how.
type Config struct {
	// MemoryLimit is the memory the process may use, in bytes; 0 means GOMEMLIMIT's
	// (debug.SetMemoryLimit), and no limit at all means DefaultMemoryBudget.
	MemoryLimit int64
	// CPUs is the number of CPUs the light classes are sized for; 0 means GOMAXPROCS.
	CPUs int
	// Capacity overrides a class's number of slots; 0 means the derived one.
	Capacity [classCount]int
	// PerHolder is how many heavy slots one holder holds at once (§ 19: two).
	PerHolder int
	// Wait is how long work waits for a slot before it is refused as busy.
	Wait time.Duration
	// RetryAfter is what a refusal of each class tells the caller to wait, in seconds.
	RetryAfter [classCount]int
}

// DefaultMemoryBudget is the memory the heavy classes are sized for when the process runs
// without a memory limit: what a small server of 2 GiB can give Parley.
const DefaultMemoryBudget = 2 << 30

// DefaultPerHolder is § 19's share: one identity holds at most two heavy slots.
const DefaultPerHolder = 2

// DefaultWait is the short wait for a slot before a refusal.
const DefaultWait = 2 * time.Second

// sizing is how each class's capacity follows from the machine. A heavy class may hold a
// quarter of the memory limit in slots of cost bytes, between min and max slots; a light
// class has perCPU slots for each CPU, at least min.
type sizing struct {
	cost       int64 // bytes one piece of work may hold (heavy classes)
	perCPU     int   // slots per CPU (light classes)
	min, max   int
	retryAfter int
}

var sizings = [classCount]sizing{
	// A read or write of one page holds little memory and, briefly, one database
	// connection; the pool bounds the database, this bounds the goroutines and buffers.
	Read:  {perCPU: 32, min: 32, retryAfter: 1},
	Write: {perCPU: 16, min: 16, retryAfter: 1},
	// argon2id at Parley's cost holds 64 MiB while it runs.
	Password: {cost: 64 << 20, min: 1, max: 4, retryAfter: 2},
	// An export streams: its buffers and one snapshot's rows in flight, a few MiB; the
	// export pool's connections bound it further.
	Export: {cost: 16 << 20, min: 2, max: 8, retryAfter: 5},
	// A drawing of the largest graph the limits allow holds Graphviz's heap.
	Drawing: {cost: 256 << 20, min: 1, max: 2, retryAfter: 5},
	// An import holds its parsed dataset, up to import_max_bytes of input and what it
	// becomes in memory.
	Import: {cost: 512 << 20, min: 1, max: 2, retryAfter: 10},
}

// MemoryLimit is the memory the heavy classes are sized for: GOMEMLIMIT when it is set,
// DefaultMemoryBudget otherwise.
func MemoryLimit() int64 {
	limit := debug.SetMemoryLimit(-1)
	if limit == math.MaxInt64 || limit <= 0 {
		return DefaultMemoryBudget
	}
	return limit
}

func (cfg Config) withDefaults() Config {
	if cfg.MemoryLimit <= 0 {
		cfg.MemoryLimit = MemoryLimit()
	}
	if cfg.CPUs <= 0 {
		cfg.CPUs = runtime.GOMAXPROCS(0)
	}
	if cfg.PerHolder <= 0 {
		cfg.PerHolder = DefaultPerHolder
	}
	if cfg.Wait <= 0 {
		cfg.Wait = DefaultWait
	}
	for _, c := range Classes() {
		s := sizings[c]
		if cfg.Capacity[c] <= 0 {
			cfg.Capacity[c] = s.capacity(cfg.MemoryLimit, cfg.CPUs)
		}
		if cfg.RetryAfter[c] <= 0 {
			cfg.RetryAfter[c] = s.retryAfter
		}
	}
	return cfg
}

func (s sizing) capacity(memory int64, cpus int) int {
	if s.cost == 0 {
		return max(s.min, s.perCPU*cpus)
	}
	return max(s.min, min(s.max, int(memory/4/s.cost)))
}

// Capacities is every class's number of slots under cfg, by the class's name: what the
// manifest and docs/operating.md show.
func (cfg Config) Capacities() map[string]int {
	cfg = cfg.withDefaults()
	out := make(map[string]int, classCount)
	for _, c := range Classes() {
		if c.Gated() {
			out[c.String()] = cfg.Capacity[c]
		}
	}
	return out
}

// SlotBytes is what one piece of work of a heavy class may hold, by which the class's slots
// are sized; 0 for the light classes. The resource matrix (tests/resources) holds every heavy
// route to it.
func (c Class) SlotBytes() int64 {
	if c < 0 || c >= classCount {
		return 0
	}
	return sizings[c].cost
}
