package web_test

import (
	"fmt"
	"net/http"
	"os"
	"runtime/metrics"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/parleyforum/parley/protocol/admission"
	"github.com/parleyforum/parley/storage"
	"github.com/parleyforum/parley/storage/storagetest"
	"github.com/parleyforum/parley/web"
)

// heapObjects is the bytes of the heap's objects, garbage not yet collected included.
func heapObjects() uint64 {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// residentMiB is the process's resident memory in MiB as the kernel counts it: now (VmRSS),
// or at its peak (VmHWM) since the peak was last reset (resetPeakResident).
func residentMiB(field string) string {
	status, _ := os.ReadFile("/proc/self/status")
	for _, line := range strings.Split(string(status), "\n") {
		if rest, ok := strings.CutPrefix(line, field+":"); ok {
			var kib int
			fmt.Sscan(rest, &kib)
			return fmt.Sprint(kib >> 10)
		}
	}
	return "?"
}

// resetPeakResident starts VmHWM afresh (Linux; elsewhere nothing happens).
func resetPeakResident() { _ = os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) }

// 200 parallel failed logins, each from an address of its own for a name that does not exist
// (checked against the dummy hash, at the full cost of 64 MiB), hold at most the password
// slots' blocks at once, and the memory is back when the burst is over. Found: with 4 slots
// the server plateaued at ~640 MB — every finished check's block stayed as garbage until the
// heap doubled — and kept it after the burst until the next collection.
func TestFailedLoginBurstReturnsItsMemory(t *testing.T) {
	const block = 64 << 20 // one argon2id check
	slots := admission.New(admission.Config{}).Capacity(admission.Password)
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		f := newSite(t, db, web.Options{TrustedProxies: loopbackProxy})
		b := f.browser(t)
		b.get("/login")
		loginFrom(b, "192.0.2.1", "nobody", "wrong password").must(t, http.StatusUnauthorized) // the dummy hash is made
		browsers := make([]*browser, 200)
		for i := range browsers {
			browsers[i] = f.browser(t)
			browsers[i].get("/login")
		}
		before, rssBefore := heapObjects(), residentMiB("VmRSS")
		resetPeakResident()

		var peak atomic.Uint64
		stop, sampled := make(chan struct{}), make(chan struct{})
		go func() {
			defer close(sampled)
			for {
				if h := heapObjects(); h > peak.Load() {
					peak.Store(h)
				}
				select {
				case <-stop:
					return
				default:
					runtimeYield()
				}
			}
		}()
		var mu sync.Mutex
		counts := map[int]int{}
		var wg sync.WaitGroup
		for i, br := range browsers {
			wg.Go(func() {
				p := loginFrom(br, fmt.Sprintf("198.51.%d.%d", i/250, i%250+1), fmt.Sprintf("nobody-%d", i), "wrong password")
				mu.Lock()
				counts[p.status]++
				mu.Unlock()
			})
		}
		wg.Wait()
		after := heapObjects()
		close(stop)
		<-sampled
		t.Logf("200 parallel failed logins, %d password slots: %v; heap objects %d MiB before, %d MiB at the peak, %d MiB after; resident %s MiB before, %s MiB at the peak, %s MiB after",
			slots, counts, before>>20, peak.Load()>>20, after>>20, rssBefore, residentMiB("VmHWM"), residentMiB("VmRSS"))
		if counts[http.StatusUnauthorized] < 1 || counts[http.StatusUnauthorized]+counts[http.StatusServiceUnavailable] != 200 {
			t.Errorf("200 failed logins answered %v: each checked (401) or refused for want of a slot (503)", counts)
		}
		if grown := int64(peak.Load()) - int64(before); grown > int64(slots+1)*block {
			t.Errorf("the heap grew by %d MiB during the burst; %d slots hold %d MiB", grown>>20, slots, slots*block>>20)
		}
		if grown := int64(after) - int64(before); grown > block {
			t.Errorf("the heap is %d MiB larger after the burst than before it", grown>>20)
		}
	})
}

// runtimeYield lets the burst run between two samples of the heap.
func runtimeYield() { time.Sleep(time.Millisecond) }
