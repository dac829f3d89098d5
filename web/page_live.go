package web

import (
	"encoding/json"

	"github.com/parleyforum/parley/protocol"
	"github.com/parleyforum/parley/protocol/admission"
)

// The live pages: the thread page and the moderation queue keep a stream open to one of
// these routes (htmx's SSE extension) and refresh a part of themselves when the stream names
// it. The stream is the feed of GET /v1/feed, read with the human's actor and the same
// operation; only its events are renamed after the parts they touch, and their data is left
// out, since a page fetches the part itself, rendered for its reader, and never builds it
// from an event. Each event keeps its id, so a browser that reconnects sends Last-Event-ID
// and is told everything it missed. A page without JavaScript never opens a stream; a reload
// shows it everything.

// Live event names: what a page refreshes when it hears one.
const (
	liveConnected = "live"     // the stream's first event, with its place; a page needs nothing of it
	liveMessages  = "messages" // the thread's messages (claims stand beside them)
	liveState     = "state"    // the thread's state and timeline
	liveQueue     = "queue"    // the moderation queue
)

// threadLive is GET /threads/{id}/live: the thread page's stream.
func (p *pages) threadLive(r *pageRequest) error {
	id, ok := threadParam(r)
	if !ok {
		return r.notFound()
	}
	return p.live(r, map[string]string{"thread": id}, func(feedType string) string {
		if feedType == protocol.FeedState {
			return liveState
		}
		return liveMessages
	})
}

// queueLive is GET /moderation/live: the queue's stream. Any message, state or claim event
// may add a proposal or settle one.
func (p *pages) queueLive(r *pageRequest) error {
	return p.live(r, map[string]string{}, func(string) string { return liveQueue })
}

// live opens the feed for the reader from Last-Event-ID when the browser reconnects, else
// from ?since=, the place the page was read at, and streams it with each event renamed by
// part.
func (p *pages) live(r *pageRequest, in map[string]string, part func(feedType string) string) error {
	if last := r.c.Get("Last-Event-ID"); last != "" {
		in["since"] = last
	} else if since := r.c.Query("since"); since != "" {
		in["since"] = since
	}
	raw, err := json.Marshal(in)
	if err != nil {
		return err
	}
	feed, err := p.svc.OpenFeed(r.c.UserContext(), r.actor(), raw)
	if refusal, ok := protocol.AsError(err); ok {
		// EventSource reads no page; the status ends the stream, and the extension opens a
		// fresh one later, from now.
		return r.c.Status(refusal.Status).SendString(string(refusal.Reason))
	} else if err != nil {
		return err
	}
	streamFeed(r.c, feed, p.feed, p.log, p.metrics, func(ev protocol.FeedEvent) protocol.FeedEvent {
		switch ev.Type {
		case protocol.FeedOpen:
			ev.Type = liveConnected
		case protocol.FeedMessage, protocol.FeedState, protocol.FeedClaim:
			ev.Type, ev.Data = part(ev.Type), liveData{}
		}
		return ev // resume keeps its name and cursor: the browser reconnects from it
	})
	return nil
}

// liveData is the data of a live event: nothing, since the page fetches the part itself.
type liveData struct{}

// registerLive adds the live pages' streams.
func (p *pages) registerLive(rt *router) {
	rt.get(admission.Listen, "/threads/:id/live", p.wrap(readers, p.threadLive))
	rt.get(admission.Listen, "/moderation/live", p.wrap(readers, p.queueLive))
}

// liveFrom is the feed's place now for the page being read (thread "" for every thread), or
// "" when it cannot be had: the page then streams from when it connects.
func (p *pages) liveFrom(r *pageRequest, thread string) string {
	in := map[string]string{}
	if thread != "" {
		in["thread"] = thread
	}
	raw, err := json.Marshal(in)
	if err != nil {
		return ""
	}
	cursor, err := p.svc.FeedCursor(r.c.UserContext(), r.actor(), raw)
	if err != nil {
		return "" // the page itself reports what is wrong with reading it
	}
	return cursor
}
