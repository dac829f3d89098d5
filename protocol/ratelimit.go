package protocol

import (
	"sync"
	"time"
)

// rateLimiter counts events per key over a sliding window, in this process: failed
// authentications per client address (failed_auths_per_minute), which each instance limits
// for the clients it serves. Writes per identity are counted in the database instead
// (storage.Forum.CountWrite), so that writes_per_minute holds across instances.
type rateLimiter struct {
	mu     sync.Mutex
	limit  int
	window time.Duration
	writes map[string][]time.Time // oldest first
	swept  time.Time
}

func newRateLimiter(limit int, window time.Duration) *rateLimiter {
	return &rateLimiter{limit: limit, window: window, writes: map[string][]time.Time{}}
}

// reserve takes a place for one write by identity at now. When the window is full it returns
// ok false and the whole seconds until a place frees up.
func (r *rateLimiter) reserve(identity string, now time.Time) (release func(), retryAfter int, ok bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.sweep(now)
	times := r.trim(identity, now)
	if len(times) >= r.limit {
		return nil, r.secondsUntilFree(times, now), false
	}
	r.writes[identity] = append(times, now)
	return func() { r.give(identity, now) }, 0, true
}

// full reports whether key's window is full at now without taking a place, and if so the
// whole seconds until a place frees up.
func (r *rateLimiter) full(key string, now time.Time) (retryAfter int, full bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	times := r.trim(key, now)
	if len(times) < r.limit {
		return 0, false
	}
	return r.secondsUntilFree(times, now), true
}

func (r *rateLimiter) secondsUntilFree(times []time.Time, now time.Time) int {
	wait := times[0].Add(r.window).Sub(now)
	return max(1, int((wait+time.Second-1)/time.Second))
}

// trim drops the writes that have left the window.
func (r *rateLimiter) trim(identity string, now time.Time) []time.Time {
	times := r.writes[identity]
	cut := 0
	for cut < len(times) && !times[cut].After(now.Add(-r.window)) {
		cut++
	}
	times = times[cut:]
	if len(times) == 0 {
		delete(r.writes, identity)
	}
	return times
}

// give returns a reserved place whose write did not commit.
func (r *rateLimiter) give(identity string, at time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	times := r.writes[identity]
	for i := len(times) - 1; i >= 0; i-- {
		if times[i].Equal(at) {
			r.writes[identity] = append(times[:i:i], times[i+1:]...)
			return
		}
	}
}

// sweep forgets idle identities now and then, so the map does not grow without bound.
func (r *rateLimiter) sweep(now time.Time) {
	if now.Sub(r.swept) < r.window {
		return
	}
	r.swept = now
	for id := range r.writes {
		r.trim(id, now)
	}
}
