package protocol_test

import (
	"context"
	"testing"
	"time"

	"github.com/parleyforum/parley/protocol"
	"github.com/parleyforum/parley/storage"
	"github.com/parleyforum/parley/storage/benchdata"
	"github.com/parleyforum/parley/storage/storagetest"
)

// longThread is the size of the thread BenchmarkReadThreadDirect reads.
const longThread = 500

// BenchmarkReadThreadDirect reads a thread of 500 messages (an ask, its answer and notes,
// seeded after a forum of 10,000 messages) through the operation layer, and the same rows
// straight through database/sql and the driver (benchdata.Direct.ReadThread: the thread, its
// messages, its claims, one query each). "ratio" runs both in turns and reports service/direct,
// the target being at most 3: what read_thread adds to the bare queries — the ORM's scanning,
// the tree, the views — must not cost more than twice the queries themselves.
//
//	go run ./storage/storagetest/cmd/with-postgres -- go test -run '^$' -bench ReadThreadDirect ./protocol/
func BenchmarkReadThreadDirect(b *testing.B) {
	eachKind(b, func(b *testing.B, kind storage.Kind) {
		ctx := context.Background()
		db := storagetest.Open(b, kind)
		if _, err := benchdata.Seed(ctx, db, benchdata.Forum{Messages: 10_000}); err != nil {
			b.Fatal(err)
		}
		long, err := benchdata.Seed(ctx, db, benchdata.Forum{Messages: longThread, ThreadSize: longThread})
		if err != nil {
			b.Fatal(err)
		}
		svc := benchService(db)
		direct, err := benchdata.OpenDirect(ctx, db.URL())
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { _ = direct.Close() })
		reader := benchAgent(99)
		req := []byte(`{"thread":"` + protocol.ThreadKey(long.FirstThread) + `"}`)

		viaService := func(b *testing.B) {
			res, err := svc.ReadThread(ctx, reader, req)
			if err != nil || res.Thread.MessageCount != longThread || len(res.Messages) != 1 || len(res.Messages[0].Replies) != longThread-1 {
				b.Fatalf("read_thread: %v, %+v", err, res)
			}
		}
		viaDriver := func(b *testing.B) {
			res, err := direct.ReadThread(ctx, long.FirstThread)
			if err != nil || res.Thread.MessageCount != longThread || len(res.Messages) != longThread {
				b.Fatalf("the direct read: %v, %+v", err, res)
			}
		}
		b.Run("service", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				viaService(b)
			}
		})
		b.Run("direct", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				viaDriver(b)
			}
		})
		b.Run("ratio", func(b *testing.B) {
			var serviceTime, directTime time.Duration
			for i := 0; i < b.N; i++ {
				t0 := time.Now()
				viaService(b)
				t1 := time.Now()
				viaDriver(b)
				serviceTime += t1.Sub(t0)
				directTime += time.Since(t1)
			}
			b.ReportMetric(float64(serviceTime.Nanoseconds())/float64(b.N), "service-ns/read")
			b.ReportMetric(float64(directTime.Nanoseconds())/float64(b.N), "direct-ns/read")
			b.ReportMetric(float64(serviceTime)/float64(directTime), "service/direct")
		})
	})
}
