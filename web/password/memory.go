package password

import (
	"runtime"
	"runtime/debug"
	"sync"
)

// Each hash or check allocates its memoryKiB block (64 MiB) afresh — golang.org/x/crypto's
// argon2 takes no block to reuse — and the block is garbage the moment the hash is made. How
// many run at once is the admission gate's to bound (its Password class, sized from the memory
// limit); what is left after them is this file's. Left to the garbage collector, the blocks of
// finished hashes pile up until the heap doubles: 200 parallel failed logins held 512 MiB of
// heap with 4 slots, and kept 256 MiB of garbage after the burst until the next collection,
// minutes later. So a hash first collects the blocks of the hashes that ended before it
// began, and the last hash of a burst gives the memory back to the system; measured (see
// docs/reliability.md), the burst's heap then stays at the slots' 4 × 64 MiB, and returns to
// where it was.
//
// Hashes of a small cost (the tests' accounts) leave little garbage and are left alone.
const returnFromKiB = 16 * 1024

var hashing struct {
	sync.Mutex
	running int
	garbage bool // a large hash ended since the last collection
}

// returningMemory runs hash, which allocates memKiB, with its memory returned as above.
func returningMemory(memKiB uint32, hash func() []byte) []byte {
	if memKiB < returnFromKiB {
		return hash()
	}
	hashing.Lock()
	collect := hashing.garbage
	hashing.garbage = false
	hashing.running++
	hashing.Unlock()
	if collect {
		runtime.GC() // the blocks of the hashes that ended, before this one allocates its own
	}
	key := hash()
	hashing.Lock()
	hashing.running--
	last := hashing.running == 0
	hashing.garbage = !last
	hashing.Unlock()
	if last {
		debug.FreeOSMemory() // the burst is over: every block back to the system
	}
	return key
}
