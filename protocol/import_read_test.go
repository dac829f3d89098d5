package protocol_test

import (
	"bytes"
	"context"
	"io"
	"runtime"
	"strings"
	"testing"

	"github.com/parleyforum/parley/protocol"
	"github.com/parleyforum/parley/storage"
	"github.com/parleyforum/parley/storage/storagetest"
)

// endless is a reader that never ends: first, then fill forever. It counts what it gave.
type endless struct {
	first []byte
	fill  byte
	read  int64
}

func (e *endless) Read(p []byte) (int, error) {
	n := copy(p, e.first)
	e.first = e.first[n:]
	for i := n; i < len(p); i++ {
		p[i] = e.fill
	}
	e.read += int64(len(p))
	return len(p), nil
}

// An import is read as a bounded stream (§ 14, limits.import_max_bytes): an export of exactly
// the limit lands, in either format; one byte more is payload_too_large, before anything is
// written; an endless input is refused having read no more than the limit and a byte — or,
// when it is no JSON (the zeros of /dev/zero), at its first bytes — and holding no more than a
// few times the limit in memory.
func TestImportReadIsBounded(t *testing.T) {
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		ctx := context.Background()
		for _, format := range []string{"json", protocol.FormatJSONL} {
			t.Run(format, func(t *testing.T) {
				export, didA := alphaExportAs(t, storagetest.Open(t, db.Kind()), format)
				limits := generous()
				limits.ImportMaxBytes = len(export)
				beta := protocol.New(storagetest.Open(t, db.Kind()), protocol.Options{Realm: "beta", Limits: limits, TrustRealms: map[string]string{"alpha": didA}})
				// One byte more: a space after the export, which is still the same export.
				_, err := beta.ImportFrom(ctx, protocol.OperatorActor(), bytes.NewReader(append(bytes.Clone(export), ' ')), 0)
				if e := wantRefused(t, err, protocol.ReasonPayloadTooLarge); e != nil && !strings.Contains(e.Message, "import_max_bytes") {
					t.Errorf("the import one byte over its limit is refused with %q", e.Message)
				}
				_, err = beta.ReadImport(bytes.NewReader(append(bytes.Clone(export), ' ')))
				wantRefused(t, err, protocol.ReasonPayloadTooLarge)
				if n := len(allThreads(t, beta)); n != 0 {
					t.Fatalf("the refused import wrote %d threads", n)
				}
				res, err := beta.ImportFrom(ctx, protocol.OperatorActor(), bytes.NewReader(export), 0)
				if err != nil || len(res.Claims) != 1 || res.Stances != 2 {
					t.Fatalf("the import of exactly import_max_bytes answered %+v, %v", res, err)
				}
				read, err := beta.ReadImport(bytes.NewReader(export))
				if err != nil || !bytes.Equal(read, export) {
					t.Errorf("ReadImport of exactly import_max_bytes answered %d bytes, %v", len(read), err)
				}
			})
		}

		limits := generous()
		limits.ImportMaxBytes = 1 << 20
		svc := protocol.New(db, protocol.Options{Realm: "beta", Limits: limits})
		for _, c := range []struct {
			name   string
			input  *endless
			reason protocol.Reason
			most   int64
		}{
			{"zeros", &endless{fill: 0}, protocol.ReasonInvalidBody, 64 << 10},
			{"an object that never ends", &endless{first: []byte(`{"realm":"alpha","claims":[`), fill: ' '}, protocol.ReasonPayloadTooLarge, 1<<20 + 64<<10},
			{"a dataset line that never ends", &endless{first: []byte(`{"type":"room","id":"rm_1"}` + "\n"), fill: ' '}, protocol.ReasonPayloadTooLarge, 1<<20 + 64<<10},
		} {
			t.Run(strings.ReplaceAll(c.name, " ", "_"), func(t *testing.T) {
				var before, after runtime.MemStats
				runtime.GC()
				runtime.ReadMemStats(&before)
				_, err := svc.ImportFrom(ctx, protocol.OperatorActor(), c.input, 0)
				runtime.ReadMemStats(&after)
				wantRefused(t, err, c.reason)
				if c.input.read > c.most {
					t.Errorf("the import read %d bytes of an endless input before it refused, more than %d", c.input.read, c.most)
				}
				if grown := after.TotalAlloc - before.TotalAlloc; grown > 16<<20 {
					t.Errorf("reading %d bytes of an endless input allocated %d bytes", c.input.read, grown)
				}
			})
		}
		_, err := svc.ReadImport(io.LimitReader(&endless{fill: 0}, 1<<30))
		wantRefused(t, err, protocol.ReasonInvalidBody)
	})
}
