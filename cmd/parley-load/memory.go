package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

// memorySampler reads the server's resident memory from its /metrics
// (process_resident_memory_bytes, which the server answers on loopback) at an interval for
// the whole run, the idle turns of the baselines included.
type memorySampler struct {
	cancel  context.CancelFunc
	done    chan struct{}
	mu      sync.Mutex
	began   time.Time
	samples []memorySample
	errors  int
}

type memorySample struct {
	at    time.Duration // since the run began
	bytes float64
}

func startMemorySampler(ctx context.Context, base string, every time.Duration) *memorySampler {
	ctx, cancel := context.WithCancel(ctx)
	s := &memorySampler{cancel: cancel, done: make(chan struct{}), began: time.Now()}
	client := &http.Client{Timeout: 5 * time.Second}
	url := strings.TrimRight(base, "/") + "/metrics"
	go func() {
		defer close(s.done)
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			rss, err := residentMemory(ctx, client, url)
			s.mu.Lock()
			if err != nil {
				s.errors++
			} else {
				s.samples = append(s.samples, memorySample{at: time.Since(s.began), bytes: rss})
			}
			s.mu.Unlock()
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	}()
	return s
}

// residentMemory reads process_resident_memory_bytes from the Prometheus text at url.
func residentMemory(ctx context.Context, client *http.Client, url string) (float64, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, err
	}
	resp, err := client.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("%s: %s", url, resp.Status)
	}
	return metricValue(resp.Body, "process_resident_memory_bytes")
}

// metricValue finds an unlabelled sample of name in the Prometheus text format.
func metricValue(r io.Reader, name string) (float64, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if rest, ok := strings.CutPrefix(line, name+" "); ok {
			return strconv.ParseFloat(strings.TrimSpace(rest), 64)
		}
	}
	if err := sc.Err(); err != nil {
		return 0, err
	}
	return 0, fmt.Errorf("no %s in the metrics", name)
}

// memoryReport is the server's resident memory over the run, in MB (10^6 bytes).
type memoryReport struct {
	Samples int     `json:"samples"`
	Failed  int     `json:"failed_reads"`
	Seconds float64 `json:"seconds"`
	FirstMB float64 `json:"first_mb"`
	MaxMB   float64 `json:"max_mb"`
	LastMB  float64 `json:"last_mb"`
	// GrowthMB is the median of the last quarter of the samples less the median of the
	// second quarter (the first is warm-up: pools, caches and the heap fill up): what the
	// server kept on taking once it had settled.
	GrowthMB float64 `json:"growth_mb"`
	// Minutes is the median of each minute's readings: flat when nothing leaks.
	Minutes []float64 `json:"minutes_mb"`
}

func (s *memorySampler) stop() *memoryReport {
	s.cancel()
	<-s.done
	s.mu.Lock()
	defer s.mu.Unlock()
	n := len(s.samples)
	if n == 0 {
		return &memoryReport{Failed: s.errors}
	}
	mb := func(b float64) float64 { return b / 1e6 }
	r := &memoryReport{Samples: n, Failed: s.errors, Seconds: s.samples[n-1].at.Seconds(),
		FirstMB: mb(s.samples[0].bytes), LastMB: mb(s.samples[n-1].bytes)}
	for _, x := range s.samples {
		r.MaxMB = max(r.MaxMB, mb(x.bytes))
	}
	if n >= 4 {
		r.GrowthMB = mb(medianBytes(s.samples[3*n/4:]) - medianBytes(s.samples[n/4:n/2]))
	}
	for from := 0; from < n; {
		to := from
		for to < n && s.samples[to].at < time.Duration(len(r.Minutes)+1)*time.Minute {
			to++
		}
		if to > from {
			r.Minutes = append(r.Minutes, mb(medianBytes(s.samples[from:to])))
		} else {
			r.Minutes = append(r.Minutes, 0) // no reading in that minute
		}
		from = to
	}
	return r
}

func medianBytes(samples []memorySample) float64 {
	xs := make([]float64, len(samples))
	for i, x := range samples {
		xs[i] = x.bytes
	}
	sort.Float64s(xs)
	return xs[len(xs)/2]
}

func (r *memoryReport) print(w io.Writer) {
	if r.Samples == 0 {
		fmt.Fprintf(w, "\nserver memory: no reading of /metrics succeeded (%d failed): is the server on loopback?\n", r.Failed)
		return
	}
	minutes := make([]string, len(r.Minutes))
	for i, m := range r.Minutes {
		minutes[i] = fmt.Sprintf("%.0f", m)
	}
	fmt.Fprintf(w, "\n| server resident memory | MB |\n|---|---:|\n| first | %.1f |\n| max | %.1f |\n| last | %.1f |\n| growth (last quarter − second quarter, %d samples over %.0fs) | %+.1f |\n| each minute's median | %s |\n",
		r.FirstMB, r.MaxMB, r.LastMB, r.Samples, r.Seconds, r.GrowthMB, strings.Join(minutes, ", "))
}
