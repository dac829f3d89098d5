package protocol_test

import (
	"context"
	"testing"

	"github.com/parleyforum/parley/storage"
	"github.com/parleyforum/parley/storage/storagetest"
)

// BenchmarkSendWAL measures what a send writes to the database's log, the part of its cost
// that does not depend on the machine: the mix of BenchmarkSendParallel sent one at a time,
// without a key (plain) and each under a key of its own (keyed). It reports bytes of log per
// send and, on SQLite, pages (each page a send changes is written whole at its commit).
// Postgres's log is the cluster's: run it with nothing else on the cluster.
//
//	go run ./storage/storagetest/cmd/with-postgres -- go test -run '^$' -bench SendWAL ./protocol/
func BenchmarkSendWAL(b *testing.B) {
	eachKind(b, func(b *testing.B, kind storage.Kind) {
		for _, variant := range []struct {
			name string
			mix  func(*serviceMix) *serviceMix
		}{
			{"plain", func(m *serviceMix) *serviceMix { return m }},
			{"keyed", (*serviceMix).keyed},
		} {
			b.Run(variant.name, func(b *testing.B) {
				db := storagetest.Open(b, kind)
				m := variant.mix(newServiceMix(b, db))
				log := walMeter(b, db)
				sent, bytes, pages := 0, 0.0, 0.0
				for sent < b.N {
					// SQLite checkpoints its log after 1,000 pages: each chunk stays below.
					chunk := min(b.N-sent, 32)
					m.prepare(b, sent+chunk)
					log.start()
					for n := sent + 1; n <= sent+chunk; n++ {
						if err := m.send(context.Background(), 1+n%benchAgents, n); err != nil {
							b.Fatal(err)
						}
					}
					nb, np := log.since()
					bytes, pages, sent = bytes+nb, pages+np, sent+chunk
				}
				b.ReportMetric(bytes/float64(sent), "wal-bytes/send")
				if kind == storage.SQLite {
					b.ReportMetric(pages/float64(sent), "wal-pages/send")
				}
			})
		}
	})
}

// walLog reads how much a database's log grew: on Postgres the distance between two
// positions of the log, on SQLite the pages in the log since it was emptied.
type walLog struct {
	b        *testing.B
	db       *storage.DB
	from     string // Postgres: the log position at start
	pageSize int64
}

func walMeter(b *testing.B, db *storage.DB) *walLog {
	l := &walLog{b: b, db: db}
	if db.Kind() == storage.SQLite {
		if err := db.NewRaw("PRAGMA page_size").Scan(context.Background(), &l.pageSize); err != nil {
			b.Fatal(err)
		}
	}
	return l
}

// start empties SQLite's log (every page written back), or notes Postgres's position.
func (l *walLog) start() {
	ctx := context.Background()
	if l.db.Kind() == storage.Postgres {
		if err := l.db.NewRaw("SELECT pg_current_wal_insert_lsn()::text").Scan(ctx, &l.from); err != nil {
			l.b.Fatal(err)
		}
		return
	}
	var busy, frames, done int
	if err := l.db.NewRaw("PRAGMA wal_checkpoint(TRUNCATE)").Scan(ctx, &busy, &frames, &done); err != nil || busy != 0 {
		l.b.Fatalf("emptying the log: %v (busy %d)", err, busy)
	}
}

// since is the log's growth since start, in bytes and (SQLite) pages.
func (l *walLog) since() (bytes, pages float64) {
	ctx := context.Background()
	if l.db.Kind() == storage.Postgres {
		if err := l.db.NewRaw("SELECT pg_wal_lsn_diff(pg_current_wal_insert_lsn(), ?::pg_lsn)", l.from).Scan(ctx, &bytes); err != nil {
			l.b.Fatal(err)
		}
		return bytes, 0
	}
	var busy, frames, done int
	if err := l.db.NewRaw("PRAGMA wal_checkpoint(PASSIVE)").Scan(ctx, &busy, &frames, &done); err != nil {
		l.b.Fatal(err)
	}
	return float64(frames) * float64(l.pageSize), float64(frames)
}
