package reputation_test

import (
	"context"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/parleyforum/parley/protocol"
	"github.com/parleyforum/parley/reputation"
	"github.com/parleyforum/parley/storage/benchdata"
	"github.com/parleyforum/parley/storage/storagetest"
)

// BenchmarkIdentityRecord reads one identity's record (GET /v1/identities/{identity}) in a
// large forum, and a thread of 500 messages (read_thread) in the same forum, in turns; "ratio"
// reports record/read_thread, the target being at most 3. The forum has
// PARLEY_BENCH_RECORD_MESSAGES messages (default 1,000,000) by 1,000 agents, as benchdata
// seeds them, and on top of it the identity asserts 100 claims, which others attest, verify
// and refute through the operation layer.
//
//	go run ./storage/storagetest/cmd/with-postgres -- go test -run '^$' -bench IdentityRecord -benchtime 50x ./reputation/
func BenchmarkIdentityRecord(b *testing.B) {
	messages := 1_000_000
	if v, err := strconv.Atoi(os.Getenv("PARLEY_BENCH_RECORD_MESSAGES")); err == nil && v > 0 {
		messages = v
	}
	for _, kind := range storagetest.Kinds() {
		b.Run(string(kind), func(b *testing.B) {
			ctx := context.Background()
			db := storagetest.Open(b, kind)
			t0 := time.Now()
			if _, err := benchdata.Seed(ctx, db, benchdata.Forum{Messages: messages}); err != nil {
				b.Fatal(err)
			}
			long, err := benchdata.Seed(ctx, db, benchdata.Forum{Messages: 500, ThreadSize: 500})
			if err != nil {
				b.Fatal(err)
			}
			b.Logf("seeded %d messages in %v", messages+500, time.Since(t0).Round(time.Second))
			limits := protocol.DefaultLimits()
			limits.WritesPerMinute = 1 << 20
			svc := protocol.New(db, protocol.Options{Limits: limits})
			rep := reputation.New(svc, reputation.Options{})
			who := benchdata.Agent("ainotes", 1)
			asserter := &protocol.Actor{Identity: who, Rights: protocol.Rights{protocol.RightRead: true, protocol.RightWrite: true}}
			checker := &protocol.Actor{Identity: "ainotes:checker", Rights: protocol.Rights{protocol.RightRead: true, protocol.RightWrite: true, protocol.RightVerify: true}}
			for i := range 100 {
				th := protocol.ThreadKey(int64(1 + i*37))
				res, err := svc.Assert(ctx, asserter, []byte(`{"thread":"`+th+`","statement":"The limit is 500.","evidence":[{"kind":"note","ref":"manifest"}]}`))
				if err != nil {
					b.Fatal(err)
				}
				cl := res.Claim.ID
				if _, err := svc.Attest(ctx, checker, []byte(`{"claim":"`+cl+`","evidence":[{"kind":"log","ref":"ran"}]}`)); err != nil {
					b.Fatal(err)
				}
				switch i % 3 {
				case 0:
					_, err = svc.Verify(ctx, checker, []byte(`{"claim":"`+cl+`"}`))
				case 1:
					_, err = svc.Refute(ctx, checker, []byte(`{"claim":"`+cl+`","evidence":[{"kind":"log","ref":"ran again"}],"body":"It is 400."}`))
				}
				if err != nil {
					b.Fatal(err)
				}
			}
			reader := &protocol.Actor{Identity: "ainotes:reader", Rights: protocol.Rights{protocol.RightRead: true}}
			recordReq := []byte(`{"identity":"` + who + `"}`)
			threadReq := []byte(`{"thread":"` + protocol.ThreadKey(long.FirstThread) + `"}`)
			record := func(b *testing.B) {
				res, err := rep.ReadIdentity(ctx, reader, recordReq)
				if err != nil || res.Record.Claims.Verified != 34 || res.Record.Messages["answer"] == 0 {
					b.Fatalf("identity_read: %v %+v", err, res)
				}
			}
			read := func(b *testing.B) {
				res, err := svc.ReadThread(ctx, reader, threadReq)
				if err != nil || res.Thread.MessageCount != 500 {
					b.Fatalf("read_thread: %v", err)
				}
			}
			b.Run("record", func(b *testing.B) {
				for b.Loop() {
					record(b)
				}
			})
			b.Run("read_thread_500", func(b *testing.B) {
				for b.Loop() {
					read(b)
				}
			})
			b.Run("ratio", func(b *testing.B) {
				var recordTime, readTime time.Duration
				for i := 0; i < b.N; i++ {
					t0 := time.Now()
					record(b)
					t1 := time.Now()
					read(b)
					recordTime += t1.Sub(t0)
					readTime += time.Since(t1)
				}
				b.ReportMetric(float64(recordTime.Nanoseconds())/float64(b.N), "record-ns")
				b.ReportMetric(float64(readTime.Nanoseconds())/float64(b.N), "read-ns")
				b.ReportMetric(float64(recordTime)/float64(readTime), "record/read")
			})
		})
	}
}
