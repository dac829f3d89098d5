package protocol

import (
	"context"
	"io"
	"slices"
	"strings"
	"sync"

	"github.com/parleyforum/parley/graph"
)

// GET /v1/export: an export for a network caller, within the rooms it reaches, in any format.
// The answer is written after the request is admitted (HTTP streams it once the handler has
// returned), so the export is opened first — every check of § 9 answered with its status —
// and streamed afterwards. One identity runs at most ExportsPerIdentity exports at once: a
// GraphML export of a large forum is built whole in memory, and eight at once took a server
// from 388 MB to 2.65 GB.

// ExportsPerIdentity is how many exports one identity may run at once on one instance.
const ExportsPerIdentity = 2

// exportRetryAfter is the retry_after of an export refused for want of a slot.
const exportRetryAfter = 5

// ExportStream is an admitted export: Stream writes it, once, and gives its slot back when it
// ends; Close gives the slot back of one that is never streamed.
type ExportStream struct {
	// Format is the format's name; MediaType and Extension what a download is told.
	Format, MediaType, Extension string
	run                          func(ctx context.Context, w io.Writer) error
	release                      func()
	once                         sync.Once
}

// Stream writes the export to w and ends it.
func (e *ExportStream) Stream(ctx context.Context, w io.Writer) error {
	defer e.Close()
	return e.run(ctx, w)
}

// Close gives the export's slot back; it may be called more than once.
func (e *ExportStream) Close() { e.once.Do(e.release) }

// OpenExport answers {format?, thread?, room?}: an export of what the caller may read (a
// token with read, within its rooms), refused as rate_limited while the caller runs
// ExportsPerIdentity exports already.
func (s *Service) OpenExport(ctx context.Context, a *Actor, raw []byte) (*ExportStream, error) {
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
	if threadID != 0 {
		if _, err := s.db.Read().In(scope).Thread(ctx, threadID); err != nil {
			return nil, fault(notFound(err, "thread %s not found", ThreadKey(threadID)))
		}
	}
	release, refusal := s.exports.take(a.Identity)
	if refusal != nil {
		return nil, refusal
	}
	e := &ExportStream{Format: name, MediaType: "application/jsonl", Extension: "jsonl", release: release,
		run: func(ctx context.Context, w io.Writer) error { return s.WriteExportIn(ctx, scope, threadID, name, w) }}
	if f, ok := graph.FormatByName(name); ok {
		e.MediaType, e.Extension = f.MediaType, f.Extension
	}
	return e, nil
}

// exportSlots counts each identity's exports running at once.
type exportSlots struct {
	mu         sync.Mutex
	byIdentity map[string]int
}

// take gives identity a slot, or refuses as rate_limited when it holds ExportsPerIdentity.
func (x *exportSlots) take(identity string) (release func(), err *Error) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.byIdentity == nil {
		x.byIdentity = map[string]int{}
	}
	if x.byIdentity[identity] >= ExportsPerIdentity {
		refusal := Refuse(ReasonRateLimited, "%d exports of this identity are running already; retry in %d seconds, when one has ended",
			ExportsPerIdentity, exportRetryAfter)
		refusal.RetryAfter = exportRetryAfter
		return nil, refusal
	}
	x.byIdentity[identity]++
	return func() {
		x.mu.Lock()
		defer x.mu.Unlock()
		if x.byIdentity[identity]--; x.byIdentity[identity] == 0 {
			delete(x.byIdentity, identity)
		}
	}, nil
}
