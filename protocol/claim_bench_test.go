package protocol_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/parleyforum/parley/storage"
	"github.com/parleyforum/parley/storage/storagetest"
)

// BenchmarkClaims measures the dialectic operations: an assert, an attestation (each by a
// new identity), reading a thread of 10 messages with 50 claims against the same thread
// without claims (ratio: what the claims add to read_thread), and the claim graph of that
// thread in JSON and GraphML.
func BenchmarkClaims(b *testing.B) {
	eachKind(b, func(b *testing.B, kind storage.Kind) {
		svc := benchService(storagetest.Open(b, kind))
		ctx := context.Background()
		asker, prover := benchAgent(0), benchAgent(1)
		evidence := `[{"kind":"url","ref":"https://example.org/run/1"},{"kind":"commit","ref":"parley@8b50d3a"}]`
		bare := conversation(b, svc, 10)
		claimed := conversation(b, svc, 10)
		scratch := conversation(b, svc, 2) // where the assert and attest benchmarks write
		for i := range 50 {
			res, err := svc.Assert(ctx, prover, []byte(fmt.Sprintf(`{"thread":"%s","statement":"claim %d","evidence":%s}`, claimed, i, evidence)))
			if err != nil {
				b.Fatal(err)
			}
			if _, err := svc.Attest(ctx, asker, []byte(`{"claim":"`+res.Claim.ID+`","evidence":`+evidence+`}`)); err != nil {
				b.Fatal(err)
			}
		}
		b.Run("assert", func(b *testing.B) {
			req := []byte(`{"thread":"` + scratch + `","statement":"a claim","evidence":` + evidence + `}`)
			for i := 0; i < b.N; i++ {
				if _, err := svc.Assert(ctx, prover, req); err != nil {
					b.Fatal(err)
				}
			}
		})
		attester := 1000 // every attestation by an identity of its own, across the runs of b.N
		b.Run("attest", func(b *testing.B) {
			// A claim answers with all its stances: a fresh claim every 10 attestations keeps
			// the answer the size of a lively claim's.
			var req []byte
			for i := 0; i < b.N; i++ {
				if i%10 == 0 {
					b.StopTimer()
					res, err := svc.Assert(ctx, prover, []byte(`{"thread":"`+scratch+`","statement":"attested","evidence":`+evidence+`}`))
					if err != nil {
						b.Fatal(err)
					}
					req = []byte(`{"claim":"` + res.Claim.ID + `","evidence":` + evidence + `}`)
					b.StartTimer()
				}
				attester++
				if _, err := svc.Attest(ctx, benchAgent(attester), req); err != nil {
					b.Fatal(err)
				}
			}
		})
		readOnce := func(b *testing.B, thread string) {
			if _, err := svc.ReadThread(ctx, benchAgent(99), []byte(`{"thread":"`+thread+`"}`)); err != nil {
				b.Fatal(err)
			}
		}
		for name, thread := range map[string]string{"read_thread/no claims": bare, "read_thread/50 claims": claimed} {
			b.Run(name, func(b *testing.B) {
				for i := 0; i < b.N; i++ {
					readOnce(b, thread)
				}
			})
		}
		b.Run("read_thread/ratio", func(b *testing.B) {
			// In turns, so that both sides see the same machine.
			var without, with time.Duration
			for i := 0; i < b.N; i++ {
				start := time.Now()
				readOnce(b, bare)
				without += time.Since(start)
				start = time.Now()
				readOnce(b, claimed)
				with += time.Since(start)
			}
			b.ReportMetric(float64(with)/float64(without), "ratio")
		})
		for _, format := range []string{"json", "graphml"} {
			b.Run("graph/"+format, func(b *testing.B) {
				req := []byte(`{"thread":"` + claimed + `","format":"` + format + `"}`)
				for i := 0; i < b.N; i++ {
					res, err := svc.Graph(ctx, benchAgent(99), req)
					if err != nil {
						b.Fatal(err)
					}
					if _, _, err := res.Document(); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	})
}
