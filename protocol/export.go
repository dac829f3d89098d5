package protocol

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strings"
	"time"

	"github.com/parleyforum/parley/graph"
	"github.com/parleyforum/parley/storage"
)

// The export of parley export: the claim graph of a thread or of the whole forum in one of
// the graph formats; in JSON also the threads, messages (flat, in order of creation),
// events and claims, so that a researcher can rebuild the forum offline.

// FormatJSONL is the dataset (§ 15): the whole forum as JSON Lines, written as it is read.
const FormatJSONL = "jsonl"

// ExportFormatNames are the formats of an export: the graph's, the default first, and the
// dataset.
func ExportFormatNames() []string { return append(graph.FormatNames(), FormatJSONL) }

// Export is the JSON export: the native graph, and the forum beside it.
type Export struct {
	Parley     string         `json:"parley"`
	ExportedAt time.Time      `json:"exported_at"`
	Nodes      []*graph.Node  `json:"nodes"`
	Edges      []*graph.Edge  `json:"edges"`
	Threads    []*ThreadView  `json:"threads"`
	Messages   []*MessageView `json:"messages"`
	Events     []*EventView   `json:"events"`
	Claims     []*ClaimView   `json:"claims"`
}

// WriteExport writes the export of a thread (0: the whole forum) in format to w.
func (s *Service) WriteExport(ctx context.Context, threadID int64, format string, w io.Writer) error {
	return s.WriteExportIn(ctx, storage.Scope{}, threadID, format, w)
}

// WriteExportIn is WriteExport of what scope holds (§ 16: a room and its inner rooms, or
// what a scoped token reaches): a thread outside it is not found.
func (s *Service) WriteExportIn(ctx context.Context, scope storage.Scope, threadID int64, format string, w io.Writer) error {
	if format == FormatJSONL {
		return s.writeDataset(ctx, scope, threadID, w)
	}
	f, ok := graph.FormatByName(format)
	if !ok {
		return fmt.Errorf("unknown format %q: use one of %s", format, strings.Join(ExportFormatNames(), ", "))
	}
	// One snapshot for the whole export (§ 15): every claim in claims[] is a node, has its
	// assert event, and reads the same state in both.
	// The keys and their bindings are read in it too: a key is listed as it was when its
	// stances were read.
	var g *graph.Graph
	var exp *Export
	var keys *custody
	// The realm key (which signs the bindings) is read before, so that the snapshot reads
	// nothing outside itself.
	if _, err := s.RealmKey(ctx); err != nil {
		return fault(err)
	}
	err := s.db.Snapshot(ctx, func(ctx context.Context, read *storage.Forum) error {
		read = read.In(scope)
		// exported_at is the snapshot's time (§ 14): no row of the export is younger.
		exportedAt, err := read.SnapshotTime(ctx)
		if err != nil {
			return err
		}
		if g, err = s.claimGraphIn(ctx, read, threadID); err != nil {
			return err
		}
		if keys, err = s.custodyKeys(ctx, read, g); err != nil || f.Name != "json" {
			return err
		}
		exp, err = s.forumExport(ctx, read, threadID)
		if exp != nil {
			exp.ExportedAt = exportedAt
		}
		return err
	})
	if err != nil {
		return fault(err)
	}
	var doc []byte
	switch f.Name {
	case "json":
		exp.Nodes, exp.Edges = g.Nodes, g.Edges
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(exp); err != nil {
			return err
		}
		doc = buf.Bytes()
	case "aif":
		var buf bytes.Buffer
		if err := f.Write(&buf, g); err != nil {
			return err
		}
		doc = buf.Bytes()
	case "graphml":
		return s.writeGraphMLWithCustody(ctx, g, keys, w)
	default:
		return f.Write(w, g)
	}
	signed, err := s.withCustody(ctx, g, keys, f.Name, doc)
	if err != nil {
		return err
	}
	var out bytes.Buffer
	if err := json.Indent(&out, signed, "", "  "); err != nil {
		return err
	}
	out.WriteByte('\n')
	_, err = w.Write(out.Bytes())
	return err
}

// forumExport reads the threads with their messages, events and claims.
func (s *Service) forumExport(ctx context.Context, read *storage.Forum, threadID int64) (*Export, error) {
	var threads []storage.Thread
	if threadID != 0 {
		t, err := read.Thread(ctx, threadID)
		if err != nil {
			return nil, fault(notFound(err, "thread %s not found", ThreadKey(threadID)))
		}
		threads = []storage.Thread{*t}
	} else {
		for before := int64(0); ; {
			page, err := read.ThreadsPage(ctx, "", before, 500)
			if err != nil {
				return nil, fault(err)
			}
			threads = append(threads, page...)
			if len(page) < 500 {
				break
			}
			before = page[len(page)-1].ID
		}
	}
	exp := &Export{Parley: "1", Threads: []*ThreadView{}, Messages: []*MessageView{},
		Events: []*EventView{}, Claims: []*ClaimView{}}
	// Oldest thread first, as everything else in the export.
	for i := len(threads) - 1; i >= 0; i-- {
		t := &threads[i]
		exp.Threads = append(exp.Threads, threadView(t))
		msgs, err := read.Messages(ctx, t.ID)
		if err != nil {
			return nil, fault(err)
		}
		for j := range msgs {
			exp.Messages = append(exp.Messages, messageView(&msgs[j]))
		}
		evs, err := read.Events(ctx, t.ID, 0, math.MaxInt32)
		if err != nil {
			return nil, fault(err)
		}
		for j := range evs {
			exp.Events = append(exp.Events, eventView(&evs[j]))
		}
		claims, err := s.threadClaims(ctx, read, t.ID)
		if err != nil {
			return nil, fault(err)
		}
		exp.Claims = append(exp.Claims, claims...)
	}
	return exp, nil
}
