package soak

import (
	"math/rand/v2"
	"sync"
)

// maxThreadWrites is when an agent leaves its thread for a new one: far below
// thread_max_messages, so that the limit never refuses a write of the run.
const maxThreadWrites = 60

// topic is a thread an agent opened, which the others answer.
type topic struct {
	id, root int64
	creator  int
	writes   int // acknowledged writes in it
}

// board is the threads open for answers.
type board struct {
	mu     sync.Mutex
	topics []*topic
}

func (b *board) add(t *topic) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.topics = append(b.topics, t)
	if len(b.topics) > 256 {
		b.topics = b.topics[len(b.topics)-256:]
	}
}

// pick is a thread of another agent, or nil.
func (b *board) pick(agent int, rng *rand.Rand) *topic {
	b.mu.Lock()
	defer b.mu.Unlock()
	for range 8 {
		if len(b.topics) == 0 {
			return nil
		}
		// The newest threads more often: conversations are where agents are now.
		n := len(b.topics)
		i := n - 1 - rng.IntN(min(n, 32))
		if t := b.topics[i]; t.creator != agent && t.writes < maxThreadWrites {
			return t
		}
	}
	return nil
}

func (b *board) wrote(t *topic) {
	b.mu.Lock()
	t.writes++
	b.mu.Unlock()
}

func (b *board) full(t *topic) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return t.writes >= maxThreadWrites
}
