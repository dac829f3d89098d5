package web

import (
	"sync"
	"time"
)

// Failed logins are limited per client address and per account name, so that guessing
// passwords is slow both for one client trying many accounts and for many clients trying
// one account. Only failures count; a success clears its account's count.
const (
	loginWindow        = 15 * time.Minute
	loginFailsPerName  = 10
	loginFailsPerAddr  = 30
	loginLimiterPrunes = 1024 // prune the map after this many failures
)

type loginLimiter struct {
	mu    sync.Mutex
	fails map[string][]time.Time // "name:…" or "addr:…" → failures in the window
	added int
	now   func() time.Time
}

func newLoginLimiter() *loginLimiter {
	return &loginLimiter{fails: map[string][]time.Time{}, now: time.Now}
}

// blocked reports whether a login from addr for name must be refused without looking.
func (l *loginLimiter) blocked(addr, name string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	return len(l.recent("addr:"+addr, now)) >= loginFailsPerAddr ||
		len(l.recent("name:"+name, now)) >= loginFailsPerName
}

// failed records a failed login.
func (l *loginLimiter) failed(addr, name string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	for _, k := range []string{"addr:" + addr, "name:" + name} {
		l.fails[k] = append(l.recent(k, now), now)
	}
	if l.added++; l.added >= loginLimiterPrunes {
		l.added = 0
		for k := range l.fails {
			if len(l.recent(k, now)) == 0 {
				delete(l.fails, k)
			}
		}
	}
}

// succeeded clears the account's failures.
func (l *loginLimiter) succeeded(name string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.fails, "name:"+name)
}

// recent is the failures of key within the window; the caller holds mu.
func (l *loginLimiter) recent(key string, now time.Time) []time.Time {
	times := l.fails[key]
	i := 0
	for i < len(times) && now.Sub(times[i]) >= loginWindow {
		i++
	}
	times = times[i:]
	l.fails[key] = times
	return times
}
