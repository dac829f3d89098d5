package protocol_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/parleyforum/parley/protocol"
	"github.com/parleyforum/parley/storage"
	"github.com/parleyforum/parley/storage/storagetest"
)

// Artifact quotas (artifact_bytes_per_identity, artifact_bytes_total) on both databases:
// new bytes count against the identity that stores them first and against the store; bytes
// over either are payload_too_large, naming the quota, and write nothing; bytes stored
// already cost nothing.

// quotaPut is one put of a quota case: who stores content, and the quota that refuses it
// ("" when it is stored).
type quotaPut struct {
	who, content, refusedBy string
}

func TestArtifactQuotas(t *testing.T) {
	const perIdentity, total = "artifact_bytes_per_identity", "artifact_bytes_total"
	cases := []struct {
		name               string
		perIdentity, total int
		puts               []quotaPut
		// usage is each identity's bytes afterwards, and "" the store's.
		usage map[string]int64
	}{
		{"an identity stores up to its quota, others go on", 10, 100, []quotaPut{
			{"alice", "aaaaa", ""}, {"alice", "bbbbb", ""}, {"alice", "c", perIdentity}, {"bob", "ccccc", ""},
		}, map[string]int64{"alice": 10, "bob": 5, "": 15}},
		{"a first artifact larger than the identity's quota", 4, 100, []quotaPut{
			{"alice", "aaaaa", perIdentity}, {"alice", "aaaa", ""},
		}, map[string]int64{"alice": 4, "": 4}},
		{"a refused put leaves room for a smaller one", 10, 100, []quotaPut{
			{"alice", "aaaaaaaa", ""}, {"alice", "bbb", perIdentity}, {"alice", "bb", ""},
		}, map[string]int64{"alice": 10, "": 10}},
		{"the store holds up to its total, whoever stores", 100, 10, []quotaPut{
			{"alice", "aaaaa", ""}, {"bob", "bbbbb", ""}, {"carol", "c", total}, {"alice", "d", total},
		}, map[string]int64{"alice": 5, "bob": 5, "carol": 0, "": 10}},
		{"the identity's quota is checked before the total", 5, 5, []quotaPut{
			{"alice", "aaaaa", ""}, {"alice", "b", perIdentity}, {"bob", "b", total},
		}, map[string]int64{"alice": 5, "bob": 0, "": 5}},
		{"bytes stored already cost nothing at the identity's quota", 5, 100, []quotaPut{
			{"alice", "aaaaa", ""}, {"bob", "bbbbb", ""}, {"bob", "aaaaa", ""}, {"alice", "aaaaa", ""}, {"alice", "bbbbb", ""},
		}, map[string]int64{"alice": 5, "bob": 5, "": 10}},
		{"bytes stored already cost nothing at the total", 100, 10, []quotaPut{
			{"alice", "aaaaa", ""}, {"bob", "bbbbb", ""}, {"carol", "aaaaa", ""}, {"carol", "x", total},
		}, map[string]int64{"alice": 5, "bob": 5, "carol": 0, "": 10}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			storagetest.Each(t, func(t *testing.T, db *storage.DB) {
				limits := generous()
				limits.ArtifactBytesPerIdentity, limits.ArtifactBytesTotal = c.perIdentity, c.total
				svc := newService(t, db, limits)
				for _, p := range c.puts {
					rowsBefore := artifactRows(t, db)
					_, err := svc.PutArtifact(context.Background(), agent(p.who, "read,write"), []byte(p.content), "text/plain")
					if p.refusedBy == "" {
						if err != nil {
							t.Fatalf("%s storing %q: %v", p.who, p.content, err)
						}
						continue
					}
					e := wantRefused(t, err, protocol.ReasonPayloadTooLarge)
					if e.Status != 413 || !strings.Contains(e.Message, p.refusedBy) {
						t.Errorf("%s storing %q: %d %q, want 413 naming %s", p.who, p.content, e.Status, e.Message, p.refusedBy)
					}
					if rows := artifactRows(t, db); rows != rowsBefore {
						t.Errorf("%s storing %q: refused, yet %d artifacts became %d", p.who, p.content, rowsBefore, rows)
					}
				}
				for who, want := range c.usage {
					mine, all := usage(t, db, protocol.AgentIdentity("ainotes", who))
					if who == "" {
						mine = all
					}
					if mine != want {
						t.Errorf("%q's artifacts take %d bytes, want %d", who, mine, want)
					}
				}
			})
		})
	}
}

// usage reads the bytes of identity's artifacts and of all.
func usage(t *testing.T, db *storage.DB, identity string) (mine, all int64) {
	t.Helper()
	mine, all, err := db.Read().ArtifactUsage(context.Background(), identity)
	if err != nil {
		t.Fatal(err)
	}
	return mine, all
}

// Puts that fit alone but not together never all commit, on Postgres (many connections at
// once) and on SQLite (one writer at a time): the quota is checked in the put's own
// transaction. And many puts of the same new bytes at once store them once, charged once.
func TestArtifactQuotasHoldUnderConcurrency(t *testing.T) {
	const size, fit, tries = 100, 4, 12
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		ctx := context.Background()
		// One put first, alone: on SQLite the first write of a process prepares its
		// statements on a connection of the pool (storage's hot path), which a dozen puts
		// that all hold one already would wait for until the busy timeout.
		if _, err := newService(t, db).PutArtifact(ctx, agent("warmup", "write"), []byte("warm up"), ""); err != nil {
			t.Fatal(err)
		}
		// putAll runs the puts at once and counts the stored and the refused.
		putAll := func(t *testing.T, svc *protocol.Service, who func(int) string, content func(int) []byte) (stored, refused int) {
			t.Helper()
			var mu sync.Mutex
			var wg sync.WaitGroup
			start := make(chan struct{})
			for i := range tries {
				wg.Go(func() {
					<-start
					_, err := svc.PutArtifact(ctx, agent(who(i), "read,write"), content(i), "")
					mu.Lock()
					defer mu.Unlock()
					if err == nil {
						stored++
						return
					}
					if e, ok := protocol.AsError(err); !ok || e.Reason != protocol.ReasonPayloadTooLarge {
						t.Errorf("put %d: %v, want stored or payload_too_large", i, err)
					}
					refused++
				})
			}
			close(start)
			wg.Wait()
			return stored, refused
		}
		distinct := func(tag string) func(int) []byte {
			return func(i int) []byte { return []byte(fmt.Sprintf("%-*s", size, fmt.Sprintf("%s %d", tag, i))) }
		}

		t.Run("one identity's quota", func(t *testing.T) {
			limits := generous()
			limits.ArtifactBytesPerIdentity = fit * size
			svc := newService(t, db, limits)
			stored, refused := putAll(t, svc, func(int) string { return "racer" }, distinct("per identity"))
			mine, _ := usage(t, db, protocol.AgentIdentity("ainotes", "racer"))
			if stored != fit || refused != tries-fit || mine != fit*size {
				t.Errorf("%d puts of %d bytes at once under a quota of %d: %d stored, %d refused, %d bytes charged; want %d, %d, %d",
					tries, size, fit*size, stored, refused, mine, fit, tries-fit, fit*size)
			}
		})

		t.Run("the store's total", func(t *testing.T) {
			_, before := usage(t, db, "")
			limits := generous()
			limits.ArtifactBytesTotal = int(before) + fit*size
			svc := newService(t, db, limits)
			stored, refused := putAll(t, svc, func(i int) string { return fmt.Sprintf("racer%d", i) }, distinct("total"))
			if _, all := usage(t, db, ""); stored != fit || refused != tries-fit || all-before != fit*size {
				t.Errorf("%d identities at once under a total of %d: %d stored, %d refused, %d bytes added; want %d, %d, %d",
					tries, fit*size, stored, refused, all-before, fit, tries-fit, fit*size)
			}
		})

		t.Run("the same new bytes by many at once", func(t *testing.T) {
			_, before := usage(t, db, "")
			svc := newService(t, db)
			same := []byte(strings.Repeat("same bytes ", 10))
			rows := artifactRows(t, db)
			stored, refused := putAll(t, svc, func(i int) string { return fmt.Sprintf("twin%d", i) }, func(int) []byte { return same })
			var charged int64
			for i := range tries {
				mine, _ := usage(t, db, protocol.AgentIdentity("ainotes", fmt.Sprintf("twin%d", i)))
				charged += mine
			}
			_, all := usage(t, db, "")
			if stored != tries || refused != 0 || artifactRows(t, db) != rows+1 || charged != int64(len(same)) || all-before != int64(len(same)) {
				t.Errorf("%d puts of the same bytes at once: %d stored, %d refused, %d new rows, %d bytes charged to identities and %d to the store; want all stored, 1 row, %d bytes charged once",
					tries, stored, refused, artifactRows(t, db)-rows, charged, all-before, len(same))
			}
		})
	})
}

// The manifest shows the quotas in force, set by name as the configuration sets them, and
// the reference values otherwise.
func TestManifestShowsArtifactQuotas(t *testing.T) {
	names := func(l protocol.Limits) map[string]int {
		var wire map[string]int
		if err := json.Unmarshal([]byte(jsonOf(protocol.New(nil, protocol.Options{Limits: l}).Manifest(nil).Limits)), &wire); err != nil {
			t.Fatal(err)
		}
		return wire
	}
	defaults := names(protocol.DefaultLimits())
	if defaults["artifact_bytes_per_identity"] != 64<<20 || defaults["artifact_bytes_total"] != 1<<30 {
		t.Errorf("reference quotas %d and %d, want 64 MiB and 1 GiB", defaults["artifact_bytes_per_identity"], defaults["artifact_bytes_total"])
	}
	l := protocol.DefaultLimits()
	for name, value := range map[string]string{"artifact_bytes_per_identity": "2048", "ARTIFACT_BYTES_TOTAL": "1000000"} {
		if err := l.Set(name, value); err != nil {
			t.Fatal(err)
		}
	}
	if got := names(l); got["artifact_bytes_per_identity"] != 2048 || got["artifact_bytes_total"] != 1000000 {
		t.Errorf("configured quotas shown as %d and %d, want 2048 and 1000000", got["artifact_bytes_per_identity"], got["artifact_bytes_total"])
	}
	if err := l.Set("artifact_bytes_total", "0"); err == nil {
		t.Error("a total quota of 0 was taken")
	}
}
