package protocol

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/parleyforum/parley/graph"
	"github.com/parleyforum/parley/jsonstream"
	"github.com/parleyforum/parley/signed"
	"github.com/parleyforum/parley/storage"
)

// The export of parley export and GET /v1/export: the claim graph of a thread or of the whole
// forum in one of the graph formats; in JSON also the threads, messages (flat, in order of
// creation), events and claims, so that a researcher can rebuild the forum offline; in jsonl
// the dataset (dataset.go). Every format is written as it is read from one snapshot (§ 15),
// a page at a time (§ 19).

// FormatJSONL is the dataset (§ 15): the whole forum as JSON Lines, written as it is read.
const FormatJSONL = "jsonl"

// ExportFormatNames are the formats of an export: the graph's, the default first, and the
// dataset.
func ExportFormatNames() []string { return append(graph.FormatNames(), FormatJSONL) }

// WriteExport writes the export of a thread (0: the whole forum) in format to w.
func (s *Service) WriteExport(ctx context.Context, threadID int64, format string, w io.Writer) error {
	return s.WriteExportIn(ctx, storage.Scope{}, threadID, format, w)
}

// WriteExportIn is WriteExport of what scope holds (§ 16: a room and its inner rooms, or
// what a scoped token reaches): a thread outside it is not found, before anything is written.
func (s *Service) WriteExportIn(ctx context.Context, scope storage.Scope, threadID int64, format string, w io.Writer) error {
	if !slices.Contains(ExportFormatNames(), format) {
		return fmt.Errorf("unknown format %q: use one of %s", format, strings.Join(ExportFormatNames(), ", "))
	}
	e, err := s.openExportSnapshot(ctx, scope, threadID, format)
	if err != nil {
		return err
	}
	defer e.close()
	return e.write(ctx, w)
}

// exportSnapshot is an export whose snapshot is open (§ 15: one snapshot for the whole
// export; § 19: opened before the first byte): write streams it from there.
type exportSnapshot struct {
	s        *Service
	snapshot *storage.OpenedSnapshot
	read     *storage.Forum
	scope    storage.Scope
	threadID int64
	format   string
	key      *signed.Signer
}

// openExportSnapshot opens the snapshot of an export on the pool of long reads, within ctx,
// and checks in it that the thread (when one is asked for) is there.
func (s *Service) openExportSnapshot(ctx context.Context, scope storage.Scope, threadID int64, format string) (*exportSnapshot, error) {
	// The realm key (which signs the bindings and the export) is read before, so that the
	// snapshot reads nothing outside itself.
	key, err := s.RealmKey(ctx)
	if err != nil {
		return nil, fault(err)
	}
	snapshot, err := s.db.OpenSnapshot(ctx)
	if err != nil {
		return nil, fault(err)
	}
	e := &exportSnapshot{s: s, snapshot: snapshot, read: snapshot.Forum().In(scope), scope: scope, threadID: threadID, format: format, key: key}
	if threadID != 0 {
		if _, err := e.read.Thread(ctx, threadID); err != nil {
			e.close()
			return nil, fault(notFound(err, "thread %s not found", ThreadKey(threadID)))
		}
	}
	return e, nil
}

func (e *exportSnapshot) close() { _ = e.snapshot.Close() }

// write writes the export in its format, from its snapshot, under ctx.
func (e *exportSnapshot) write(ctx context.Context, w io.Writer) error {
	s, read := e.s, e.read
	if e.format == FormatJSONL {
		return s.writeDataset(ctx, read, e.scope, e.threadID, w)
	}
	// The snapshot's time (§ 14): exported_at, and the time each claim's expiry is read
	// against, so that no row of the export is younger than the export says it is.
	now, err := read.SnapshotTime(ctx)
	if err != nil {
		return fault(err)
	}
	src := s.exportGraphOf(ctx, read, e.threadID, now)
	switch e.format {
	case "json":
		err = s.writeJSONExport(ctx, read, src, e.threadID, now, e.key, w)
	case "aif":
		err = s.writeAIFExport(ctx, read, src, e.threadID, e.key, w)
	case "graphml":
		err = s.writeGraphMLExport(ctx, read, src, e.key, w)
	default:
		f, _ := graph.FormatByName(e.format)
		err = f.Write(w, src)
	}
	return fault(err)
}

// writeJSONExport writes the JSON export: the native graph, and the forum beside it —
// threads, messages (flat, in order of creation), events and claims, each thread's oldest
// first — so that a researcher can rebuild the forum offline; with the custody members and
// the proof of § 14 last. It is written in canonical (JCS) order, indented, as it is read.
func (s *Service) writeJSONExport(ctx context.Context, read *storage.Forum, src graph.Source, threadID int64, now time.Time, key *signed.Signer, w io.Writer) error {
	jw := jsonstream.New(w, jsonstream.Options{Canonical: true, Indent: "  "})
	// claims passes every stance: the keys are known after it.
	notes := &custodyNotes{}
	err := jw.Array("claims", false, func(put func(any) error) error {
		return eachExportThread(ctx, read, threadID, func(t *storage.Thread) error {
			return s.exportGraphOf(ctx, read, t.ID, now).eachClaim(false, func(v *ClaimView, _ graph.Label) error {
				for _, stances := range [][]*StanceView{v.Attestations, v.Refutations, v.Verifications} {
					for _, st := range stances {
						if err := notes.noteDocument(st.Document); err != nil {
							return err
						}
					}
				}
				return put(v)
			})
		})
	})
	if err != nil {
		return err
	}
	if err := graph.JSONEdges(jw, src); err != nil {
		return err
	}
	err = jw.Array("events", false, func(put func(any) error) error {
		return eachExportThread(ctx, read, threadID, func(t *storage.Thread) error {
			return pages(ctx, t.ID, read.EventsAfter, func(e *storage.Event) int64 { return e.ID }, func(page []storage.Event) error {
				for i := range page {
					if err := put(eventView(&page[i])); err != nil {
						return err
					}
				}
				return nil
			})
		})
	})
	if err != nil {
		return err
	}
	if err := jw.Put("exported_at", now); err != nil {
		return err
	}
	c, err := s.custodyOf(ctx, read, notes)
	if err != nil {
		return err
	}
	err = s.putCustody(jw, c, key, func() error {
		err := jw.Array("messages", false, func(put func(any) error) error {
			return eachExportThread(ctx, read, threadID, func(t *storage.Thread) error {
				return pages(ctx, t.ID, read.MessagesAfter, func(m *storage.Message) int64 { return m.ID }, func(page []storage.Message) error {
					for i := range page {
						if err := put(messageView(&page[i])); err != nil {
							return err
						}
					}
					return nil
				})
			})
		})
		if err != nil {
			return err
		}
		if err := graph.JSONNodes(jw, src); err != nil {
			return err
		}
		return jw.Put("parley", "1")
	})
	if err != nil {
		return err
	}
	err = jw.Array("threads", false, func(put func(any) error) error {
		return eachExportThread(ctx, read, threadID, func(t *storage.Thread) error { return put(threadView(t)) })
	})
	if err != nil {
		return err
	}
	return signStream(jw, key)
}

// eachExportThread gives the thread threadID, or (0) every thread read reaches, oldest first.
func eachExportThread(ctx context.Context, read *storage.Forum, threadID int64, fn func(*storage.Thread) error) error {
	if threadID != 0 {
		t, err := read.Thread(ctx, threadID)
		if err != nil {
			return notFound(err, "thread %s not found", ThreadKey(threadID))
		}
		return fn(t)
	}
	return pages(ctx, 0, read.ThreadsAfter, func(t *storage.Thread) int64 { return t.ID }, func(page []storage.Thread) error {
		for i := range page {
			if err := fn(&page[i]); err != nil {
				return err
			}
		}
		return nil
	})
}
