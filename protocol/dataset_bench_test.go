package protocol_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"runtime"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/parleyforum/parley/protocol"
	"github.com/parleyforum/parley/storage"
	"github.com/parleyforum/parley/storage/benchdata"
	"github.com/parleyforum/parley/storage/storagetest"
)

// BenchmarkDatasetMemory writes the dataset of forums of growing size on SQLite and reports
// the peak of the live heap while it does (sampled every 2 ms), the peak resident memory of
// the process during the export (Linux), the dataset's size and how long it took. Streamed
// from keyset pages, the peak must stay flat as the forum grows. The sizes (messages) come
// from PARLEY_DATASET_SIZES, e.g. "10000,100000"; "small" (the default) is 2,000. A forum gets
// one claim, attested, per ten threads.
//
//	PARLEY_DATASET_SIZES=10000,100000 go test -run '^$' -bench DatasetMemory -benchtime 1x ./protocol/
func BenchmarkDatasetMemory(b *testing.B) {
	for _, size := range datasetSizes(b) {
		b.Run(fmt.Sprintf("messages=%d", size), func(b *testing.B) {
			ctx := context.Background()
			db := storagetest.Open(b, storage.SQLite)
			seeded, err := benchdata.Seed(ctx, db, benchdata.Forum{Messages: size})
			if err != nil {
				b.Fatal(err)
			}
			svc := benchService(db)
			asserter, attester := agent("asserter", "read,write"), agent("attester", "read,write")
			for th := seeded.FirstThread; th <= seeded.LastThread; th += 10 {
				c, err := claimOp(svc, asserter, "assert", `{"thread":"`+protocol.ThreadKey(th)+`","statement":"claim of `+protocol.ThreadKey(th)+`","evidence":`+proof+`}`)
				if err == nil {
					_, err = claimOp(svc, attester, "attest", `{"claim":"`+c.Claim.ID+`","evidence":`+proof+`}`)
				}
				if err != nil {
					b.Fatal(err)
				}
			}
			for b.Loop() {
				runtime.GC()
				resetPeakRSS()
				stop := sampleHeap()
				began := time.Now()
				var out countingWriter
				if err := svc.WriteExportIn(ctx, storage.Scope{}, 0, "jsonl", &out); err != nil {
					b.Fatal(err)
				}
				took := time.Since(began)
				peak := stop()
				if !bytes.Contains(out.last, []byte(`"type":"export"`)) {
					b.Fatalf("the dataset does not end with its export line: %q", out.last)
				}
				b.ReportMetric(float64(peak)/1e6, "peak-heap-MB")
				if rss := peakRSS(); rss > 0 {
					b.ReportMetric(float64(rss)/1e6, "peak-RSS-MB")
				}
				b.ReportMetric(float64(out.n)/1e6, "dataset-MB")
				b.ReportMetric(took.Seconds(), "export-s")
			}
		})
	}
}

func datasetSizes(b *testing.B) []int {
	spec := os.Getenv("PARLEY_DATASET_SIZES")
	if spec == "" || spec == "small" {
		return []int{2000}
	}
	var out []int
	for _, s := range strings.Split(spec, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n < 1 {
			b.Fatalf("PARLEY_DATASET_SIZES=%q: %q is not a number of messages", spec, s)
		}
		out = append(out, n)
	}
	return out
}

// countingWriter counts what is written and keeps the last bytes.
type countingWriter struct {
	n    int64
	last []byte
}

func (w *countingWriter) Write(p []byte) (int, error) {
	w.n += int64(len(p))
	w.last = append(w.last[:0], p[max(0, len(p)-4096):]...)
	return len(p), nil
}

// sampleHeap samples the live heap until the function it returns is called, which answers
// the peak.
func sampleHeap() func() uint64 {
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	var peak uint64
	var mu sync.Mutex
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		tick := time.NewTicker(2 * time.Millisecond)
		defer tick.Stop()
		for {
			metrics.Read(sample)
			mu.Lock()
			peak = max(peak, sample[0].Value.Uint64())
			mu.Unlock()
			select {
			case <-done:
				return
			case <-tick.C:
			}
		}
	}()
	return func() uint64 {
		close(done)
		wg.Wait()
		return peak
	}
}

// resetPeakRSS resets the process's peak resident memory (Linux; elsewhere nothing).
func resetPeakRSS() { _ = os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) }

// peakRSS is the process's peak resident memory since the last reset, 0 when unknown.
func peakRSS() int64 {
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(status), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			return kb * 1024
		}
	}
	return 0
}
