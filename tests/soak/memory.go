package soak

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

// memory is the resident memory (VmRSS) of each server process, sampled every second.
type memory struct {
	begin time.Time
	mu    sync.Mutex
	runs  map[int][]memSample // by lifetime: the first process is 1, the one after a kill 2 …
}

type memSample struct {
	at  time.Duration // since the process started
	kib int64
}

func newMemory() *memory { return &memory{begin: time.Now(), runs: map[int][]memSample{}} }

func (m *memory) sample(ctx context.Context, lifetime, pid int) {
	start := time.Now()
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		if kib, err := residentKiB(pid); err == nil {
			m.mu.Lock()
			m.runs[lifetime] = append(m.runs[lifetime], memSample{at: time.Since(start), kib: kib})
			m.mu.Unlock()
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// residentKiB reads VmRSS from /proc/PID/status.
func residentKiB(pid int) (int64, error) {
	f, err := os.Open("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			return strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
		}
	}
	return 0, fmt.Errorf("no VmRSS in /proc/%d/status", pid)
}

// MemoryReport is the server's resident memory over the run: over every process, and the
// trend of the longest-lived one after its warm-up (its first fifth, at least 30 s when it
// lived long enough), where a leak would show as a steady slope.
type MemoryReport struct {
	Processes             int
	StartMB, MaxMB, EndMB float64 // the first sample of the first process, the largest, the last
	LongestLived          time.Duration
	WarmedMB, FinalMB     float64 // the longest-lived process after warm-up and at its end
	SlopeMBPerMin         float64 // least-squares slope after warm-up
	Samples               int     // after warm-up
}

func (m *memory) report() MemoryReport {
	m.mu.Lock()
	defer m.mu.Unlock()
	r := MemoryReport{Processes: len(m.runs)}
	if len(m.runs) == 0 {
		return r
	}
	longest := 0
	for lifetime := 1; lifetime <= len(m.runs); lifetime++ {
		s := m.runs[lifetime]
		if len(s) == 0 {
			continue
		}
		if r.StartMB == 0 {
			r.StartMB = mb(s[0].kib)
		}
		for _, x := range s {
			r.MaxMB = max(r.MaxMB, mb(x.kib))
		}
		r.EndMB = mb(s[len(s)-1].kib)
		if longest == 0 || s[len(s)-1].at > m.runs[longest][len(m.runs[longest])-1].at {
			longest = lifetime
		}
	}
	if longest == 0 {
		return r
	}
	s := m.runs[longest]
	r.LongestLived = s[len(s)-1].at.Round(time.Second)
	warm := min(max(r.LongestLived/5, 30*time.Second), r.LongestLived/2)
	var after []memSample
	for _, x := range s {
		if x.at >= warm {
			after = append(after, x)
		}
	}
	if len(after) < 2 {
		return r
	}
	r.Samples = len(after)
	r.WarmedMB, r.FinalMB = mb(after[0].kib), mb(after[len(after)-1].kib)
	r.SlopeMBPerMin = slope(after)
	return r
}

// slope is the least-squares slope of the samples, in MB per minute.
func slope(s []memSample) float64 {
	var n, sx, sy, sxx, sxy float64
	for _, x := range s {
		t, y := x.at.Minutes(), mb(x.kib)
		n++
		sx += t
		sy += y
		sxx += t * t
		sxy += t * y
	}
	d := n*sxx - sx*sx
	if d == 0 {
		return 0
	}
	return (n*sxy - sx*sy) / d
}

func mb(kib int64) float64 { return float64(kib) / 1024 }
