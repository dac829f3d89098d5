package protocol_test

import (
	"context"
	"fmt"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/parleyforum/parley/protocol"
	"github.com/parleyforum/parley/storage"
	"github.com/parleyforum/parley/storage/storagetest"
)

// Every export format is written as a stream, with memory independent of the forum's size
// (§ 19): exporting a forum ten times larger — a thread of the most claims, with many stances —
// holds about what exporting the small one held, and far less than the export itself. The
// live heap is sampled while the export streams, with the collector set to run often, so
// that what is measured is what the export holds, not its garbage.
func TestExportMemoryDoesNotGrowWithTheForum(t *testing.T) {
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		svc := protocol.New(db, protocol.Options{Limits: generous()})
		alice := agent("alice", "read,write")
		grow := func(claims, stances int) {
			th := send(t, svc, alice, envelope("ask", "", "How large can a thread grow?")).Thread.ID
			c := mustClaim(t, svc, alice, "assert", `{"thread":"`+th+`","statement":"it grows","evidence":`+proof+`}`)
			mustClaim(t, svc, agent("bob", "read,write"), "attest", `{"claim":"`+c.ID+`","note":"`+strings.Repeat("seen ", 20)+`","evidence":`+proof+`}`)
			fillThread(t, db, th, claims, stances)
		}
		defer debug.SetGCPercent(debug.SetGCPercent(10))

		grow(20, 25) // 500 stances
		small := map[string]exportCost{}
		for _, format := range protocol.ExportFormatNames() {
			small[format] = exportCostOf(t, svc, format)
		}
		grow(200, 50) // the most claims a thread holds, 10,000 stances more
		for _, format := range protocol.ExportFormatNames() {
			large := exportCostOf(t, svc, format)
			s := small[format]
			t.Logf("%-7s small: %6.1f MB written, %5.1f MB held; large: %6.1f MB written, %5.1f MB held",
				format, mb(s.written), mb(s.held), mb(large.written), mb(large.held))
			if large.written < 10*s.written {
				t.Fatalf("%s: the large forum's export (%d bytes) is not ten times the small one's (%d)", format, large.written, s.written)
			}
			// A few MB of rows in flight (a page of claims, the stances of a batch of them,
			// buffers), whatever the forum's size; the whole graph held, as before, was two to
			// six times the export.
			const inFlight = 2 << 20
			if large.held > inFlight+large.written/4 {
				t.Errorf("%s: exporting %.1f MB held %.1f MB", format, mb(large.written), mb(large.held))
			}
			if grew := int64(large.held) - int64(s.held); grew > inFlight+int64(large.written-s.written)/8 {
				t.Errorf("%s: the export held %.1f MB more for a forum whose export is %.1f MB larger", format, mb(uint64(grew)), mb(large.written-s.written))
			}
		}
	})
}

type exportCost struct{ written, held uint64 }

func mb(n uint64) float64 { return float64(n) / (1 << 20) }

// exportCostOf exports the whole forum in format and measures the bytes written and the
// most live heap while it streamed (as each collection found it), above what was live
// before.
func exportCostOf(t *testing.T, svc *protocol.Service, format string) exportCost {
	t.Helper()
	live := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	runtime.GC()
	metrics.Read(live)
	before := live[0].Value.Uint64()
	var peak uint64
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		sample := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
		for {
			metrics.Read(sample)
			peak = max(peak, sample[0].Value.Uint64())
			select {
			case <-done:
				return
			case <-tick.C:
			}
		}
	}()
	var w countingWriter
	err := svc.WriteExport(context.Background(), 0, format, &w)
	close(done)
	wg.Wait()
	if err != nil {
		t.Fatalf("%s: %v", format, err)
	}
	return exportCost{written: uint64(w.n), held: max(peak, before) - before}
}

// fillThread fills a thread (with its first claim and one attestation written already) to
// claims claims of stances stances each through storage, copying the rows the protocol
// wrote: the API's write rate would take minutes. Every tenth claim is refuted.
func fillThread(t *testing.T, db *storage.DB, th string, claims, stances int) {
	t.Helper()
	id, _ := protocol.ParseIDString(th, "th_")
	err := db.Write(context.Background(), func(ctx context.Context, f *storage.Forum) error {
		have, err := f.ClaimsOf(ctx, id)
		if err != nil {
			return err
		}
		first, err := f.StancesOf(ctx, []int64{have[0].ID})
		if err != nil {
			return err
		}
		template, attest := have[0], first[0]
		all := []storage.Claim{have[0]}
		for len(all) < claims {
			c := template
			c.ID, c.Statement = 0, fmt.Sprintf("claim %d of a large thread: %s", len(all), strings.Repeat("words ", 30))
			if err := f.InsertClaim(ctx, &c); err != nil {
				return err
			}
			all = append(all, c)
		}
		var rows []storage.Stance
		for n, c := range all {
			for k := 0; k < stances; k++ {
				if n == 0 && k == 0 {
					continue // the attestation written through the protocol
				}
				st := attest
				st.ID, st.ClaimID, st.Identity = 0, c.ID, fmt.Sprintf("test:s%d-%d", n, k)
				if (n+1)%10 == 0 && k == stances-1 {
					body := "it does not hold"
					st.Kind, st.Note, st.Body = storage.StanceRefute, nil, &body
				}
				rows = append(rows, st)
			}
		}
		return f.InsertStances(ctx, rows)
	})
	if err != nil {
		t.Fatal(err)
	}
}
