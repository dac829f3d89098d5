package protocol

import (
	"context"
	"strings"
	"sync"
	"time"

	"github.com/parleyforum/parley/storage"
)

// § 13 feed (profile feed): everything written that a reader may read — new messages, the
// events of threads' states and of claims — in commit order, each at a resumable cursor. The
// feed is read from the database by cursor and waits for the database's change signal
// (storage.Changes), so that a listener never misses or repeats an event, also across a
// restart or another instance's writes. The transport frames it (Server-Sent Events over
// HTTP) and decides how long it holds a listener; what is shown, and from where, is decided
// here.

func init() {
	profiles = append(profiles, ProfileInfo{Name: "feed", Version: "1",
		About: "GET /v1/feed: Server-Sent Events of new messages (event message), thread state events (state) and claim events (claim), " +
			"?thread= to narrow; each id is a cursor to resume from (Last-Event-ID or ?since=); inbox wait_seconds is the long poll for MCP."})
}

// Feed event types, the SSE event names.
const (
	FeedOpen    = "open"    // the stream's first event: the cursor it starts from
	FeedMessage = "message" // a new message (MessageView)
	FeedState   = "state"   // an event of a thread's state (EventView)
	FeedClaim   = "claim"   // an event of a claim's state (EventView)
	FeedResume  = "resume"  // the stream ends: resume from the cursor given
)

// FeedEvent is one event of the feed.
type FeedEvent struct {
	Cursor string // where a listener that has this event resumes
	Type   string
	Data   any // *MessageView or *EventView
}

// Feed is one listener's place in the feed. It holds one of the places of
// inbox_waits_per_identity and inbox_waits_max, as a long poll does, until Close.
type Feed struct {
	svc     *Service
	thread  int64
	scope   storage.Scope // what the listener reaches, narrowed to its room (§ 16)
	list    CursorList    // the feed as this listener reads it
	after   storage.Position
	release func()
	closed  sync.Once
}

const feedCursorTag = "f1"

// OpenFeed answers {thread?, since?}: the feed of every thread, or of one, from since (a
// cursor of an earlier event), or from now. A listener is a request held open like a long
// poll, and takes a place of the same limits (rate_limited when there is none); the caller
// must Close the feed.
func (s *Service) OpenFeed(ctx context.Context, a *Actor, raw []byte) (*Feed, error) {
	o, err := input(a, raw)
	if err != nil {
		return nil, err
	}
	thread, _, err := o.id("thread", "th_")
	if err != nil {
		return nil, err
	}
	since, hasSince, err := o.str("since")
	if err != nil {
		return nil, err
	}
	room, _, err := o.room("room")
	if err != nil {
		return nil, err
	}
	if err := o.rest(); err != nil {
		return nil, err
	}
	f := &Feed{svc: s, thread: thread, list: feedList(a, thread, room)}
	if hasSince {
		n, err := s.decodeCursor("since", feedCursorTag, f.list, since, 2)
		if err != nil {
			return nil, err
		}
		f.after = storage.Position{Tx: n[0], Seq: n[1]}
	}
	if err := requireActor(a, RightRead); err != nil {
		return nil, err
	}
	scope, serr := s.roomScope(ctx, a, room)
	if serr != nil {
		return nil, serr
	}
	f.scope = scope
	if _, refusal := s.cursorKey(); refusal != nil {
		return nil, refusal // Cursor signs with it
	}
	read := s.db.Read().In(scope)
	if thread != 0 {
		if _, err := read.Thread(ctx, thread); err != nil {
			return nil, fault(notFound(err, "thread %s not found", ThreadKey(thread)))
		}
	}
	if !hasSince {
		_, horizon, err := read.Feed(ctx, storage.FeedQuery{ThreadID: thread})
		if err != nil {
			return nil, fault(err)
		}
		f.after = horizon
	}
	release, err := s.waits.take(a.Identity)
	if err != nil {
		return nil, err
	}
	f.release = release
	return f, nil
}

// Close gives the listener's place back.
func (f *Feed) Close() { f.closed.Do(f.release) }

// Cursor is the feed's place: a listener that resumes from it misses nothing after what it
// has been given.
//
// Open has read the cursor key, so signing cannot fail here.
func (f *Feed) Cursor() string {
	c, _ := f.svc.encodeCursor(feedCursorTag, f.list, f.after.Tx, f.after.Seq)
	return c
}

// Next gives up to max events after the feed's place and moves past them. When there are
// none it waits, up to wait, for the change signal, and gives none if nothing came; the end
// of ctx ends the wait, not a read under way.
func (f *Feed) Next(ctx context.Context, max int, wait time.Duration) ([]FeedEvent, error) {
	var events []FeedEvent
	err := waitForNews(ctx, wait, f.svc.db.Changes().WaitFeed, func() (bool, error) {
		var err error
		events, err = f.read(ctx, max)
		return len(events) > 0, err
	})
	return events, err
}

// read reads once, within the deadline of one request's database work.
func (f *Feed) read(ctx context.Context, max int) ([]FeedEvent, error) {
	ctx, cancel := f.svc.Bounded(context.WithoutCancel(ctx))
	defer cancel()
	items, horizon, err := f.svc.db.Read().In(f.scope).Feed(ctx, storage.FeedQuery{After: f.after, ThreadID: f.thread, Limit: max})
	if err != nil {
		return nil, fault(err)
	}
	events := make([]FeedEvent, 0, len(items))
	for _, it := range items {
		f.after = it.Position
		ev := FeedEvent{Cursor: f.Cursor()}
		switch {
		case it.Message != nil:
			ev.Type, ev.Data = FeedMessage, messageView(it.Message)
		case strings.HasPrefix(it.Event.Subject, "cl_"):
			ev.Type, ev.Data = FeedClaim, eventView(it.Event)
		default:
			ev.Type, ev.Data = FeedState, eventView(it.Event)
		}
		events = append(events, ev)
	}
	// Everything up to the horizon has been seen when fewer than max came.
	if len(items) < max && f.after.Less(horizon) {
		f.after = horizon
	}
	return events, nil
}

// feedList is the feed of thread (0: of every thread) in room ("" for every room), as a reads
// it.
func feedList(a *Actor, thread int64, room string) CursorList {
	return ListOf(a, "feed", "thread", thread, "room", roomFilter(room))
}

// FeedCursor answers {thread?} with the feed's place now, without holding a listener's
// place: a page rendered now opens its stream from it later, and so misses nothing written
// in between.
func (s *Service) FeedCursor(ctx context.Context, a *Actor, raw []byte) (string, error) {
	o, err := input(a, raw)
	if err != nil {
		return "", err
	}
	thread, _, err := o.id("thread", "th_")
	if err != nil {
		return "", err
	}
	room, _, err := o.room("room")
	if err != nil {
		return "", err
	}
	if err := o.rest(); err != nil {
		return "", err
	}
	if err := requireActor(a, RightRead); err != nil {
		return "", err
	}
	scope, serr := s.roomScope(ctx, a, room)
	if serr != nil {
		return "", serr
	}
	_, horizon, err2 := s.db.Read().In(scope).Feed(ctx, storage.FeedQuery{ThreadID: thread})
	if err2 != nil {
		return "", fault(err2)
	}
	c, refusal := s.encodeCursor(feedCursorTag, feedList(a, thread, room), horizon.Tx, horizon.Seq)
	if refusal != nil {
		return "", refusal
	}
	return c, nil
}
