package protocol

import (
	"context"
	"io"
	"slices"
	"strings"
	"sync"

	"github.com/parleyforum/parley/graph"
	"github.com/parleyforum/parley/protocol/admission"
)

// GET /v1/export: an export for a network caller, within the rooms it reaches, in any format.
// The answer is written after the request is admitted (HTTP streams it once the handler has
// returned), so the export is opened first — every check of § 9 answered with its status, a
// slot of the export class taken (§ 19: two heavy slots per identity, rate_limited beyond;
// unavailable when every export slot stays busy) and its snapshot opened on the pool of long
// reads, all within the request's deadline (unavailable otherwise) — and streamed afterwards
// from that snapshot: nothing is sent before the database has answered.

// ExportStream is an admitted export with its snapshot open: Stream writes it, once, and
// gives its slot and snapshot back when it ends; Close gives them back of one that is never
// streamed.
type ExportStream struct {
	// Format is the format's name; MediaType and Extension what a download is told.
	Format, MediaType, Extension string
	export                       *exportSnapshot
	release                      func()
	once                         sync.Once
}

// Stream writes the export to w and ends it.
func (e *ExportStream) Stream(ctx context.Context, w io.Writer) error {
	defer e.Close()
	return e.export.write(ctx, w)
}

// Close gives the export's slot and snapshot back; it may be called more than once.
func (e *ExportStream) Close() {
	e.once.Do(func() {
		e.export.close()
		e.release()
	})
}

// OpenExport answers {format?, thread?, room?}: an export of what the caller may read (a
// token with read, within its rooms), admitted for the caller (HolderOf the actor and its
// address) and opened within ctx.
func (s *Service) OpenExport(ctx context.Context, a *Actor, address string, raw []byte) (*ExportStream, error) {
	o, err := input(a, raw)
	if err != nil {
		return nil, err
	}
	threadID, _, err := o.id("thread", "th_")
	if err != nil {
		return nil, err
	}
	room, _, err := o.room("room")
	if err != nil {
		return nil, err
	}
	name, hasFormat, err := o.str("format")
	if err != nil {
		return nil, err
	}
	if !hasFormat {
		name = "json"
	}
	if !slices.Contains(ExportFormatNames(), name) {
		return nil, Refuse(ReasonInvalidBody, "field format must be one of %s", strings.Join(ExportFormatNames(), ", "))
	}
	if err := o.rest(); err != nil {
		return nil, err
	}
	if err := requireActor(a, RightRead); err != nil {
		return nil, err
	}
	scope, err2 := s.roomScope(ctx, a, room)
	if err2 != nil {
		return nil, err2
	}
	release, admitErr := s.Admit(ctx, admission.Export, HolderOf(a, address))
	if admitErr != nil {
		return nil, admitErr
	}
	export, openErr := s.openExportSnapshot(ctx, scope, threadID, name)
	if openErr != nil {
		release()
		return nil, openErr
	}
	e := &ExportStream{Format: name, MediaType: "application/jsonl", Extension: "jsonl", export: export, release: release}
	if f, ok := graph.FormatByName(name); ok {
		e.MediaType, e.Extension = f.MediaType, f.Extension
	}
	return e, nil
}
