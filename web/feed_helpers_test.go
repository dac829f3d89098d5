package web_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/parleyforum/parley/storage"
	"github.com/parleyforum/parley/web"
)

// newFeedForum is newForum with options of its own (the feed's, the timeouts).
func newFeedForum(t testing.TB, db *storage.DB, opts web.Options) *forum {
	t.Helper()
	f := &forum{t: t, db: db, logs: new(syncBuffer)}
	opts.DB, opts.Version, opts.Logger = db, "test", slog.New(slog.NewTextHandler(f.logs, nil))
	f.app = web.New(opts)
	// A feed given longer than § 19's 10 s for a write its listener takes (Feed.WriteTimeout)
	// is served on connections that wait as long for a slow reader.
	f.base = serveWith(t, f.app, web.ListenerOptions{SlowReaderGrace: opts.Feed.WriteTimeout})
	f.alice = f.token("ainotes:alice", false, "read,write", nil)
	f.bob = f.token("ainotes:bob", false, "read,write", nil)
	f.reader = f.token("ainotes:reader", false, "read", nil)
	return f
}

// sseEvent is one event of a Server-Sent Events stream, or a comment.
type sseEvent struct {
	id, event, data string
	comment         string
}

// field decodes the event's data and reads a string at a path of keys.
func (e sseEvent) field(t testing.TB, keys ...string) string {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(e.data), &v); err != nil {
		t.Fatalf("event %s: data %q: %v", e.event, e.data, err)
	}
	for _, k := range keys {
		m, _ := v.(map[string]any)
		v = m[k]
	}
	s, _ := v.(string)
	return s
}

// stream is an open GET /v1/feed.
type stream struct {
	t      testing.TB
	resp   *http.Response
	r      *bufio.Reader
	events chan sseEvent // closed when the stream ends
	cancel context.CancelFunc
}

// openFeed opens the feed at target with token and, when lastEventID is given, that
// Last-Event-ID; client nil means http.DefaultClient. The answer must be a stream.
func (f *forum) openFeed(target, token, lastEventID string, client *http.Client) *stream {
	f.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, f.base+target, nil)
	if err != nil {
		f.t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	if lastEventID != "" {
		req.Header.Set("Last-Event-ID", lastEventID)
	}
	if client == nil {
		client = http.DefaultClient
	}
	resp, err := client.Do(req)
	if err != nil {
		cancel()
		f.t.Fatalf("GET %s: %v", target, err)
	}
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		cancel()
		f.t.Fatalf("GET %s: %d %s: %s", target, resp.StatusCode, resp.Header.Get("Content-Type"), body)
	}
	s := &stream{t: f.t, resp: resp, r: bufio.NewReader(resp.Body), cancel: cancel}
	f.t.Cleanup(s.close)
	return s
}

// start reads the stream in the background into s.events.
func (s *stream) start() *stream {
	s.events = make(chan sseEvent, 10000)
	go func() {
		defer close(s.events)
		for {
			ev, ok := s.readEvent()
			if !ok {
				return
			}
			s.events <- ev
		}
	}()
	return s
}

func (s *stream) close() {
	s.cancel()
	s.resp.Body.Close()
}

// readEvent reads the next event or comment from the stream; false when it ended.
func (s *stream) readEvent() (sseEvent, bool) {
	var ev sseEvent
	seen := false
	for {
		line, err := s.r.ReadString('\n')
		if err != nil {
			return ev, false
		}
		line = strings.TrimSuffix(line, "\n")
		if line == "" {
			if seen {
				return ev, true
			}
			continue
		}
		seen = true
		name, value, _ := strings.Cut(line, ":")
		value = strings.TrimPrefix(value, " ")
		switch name {
		case "":
			ev.comment = value
		case "id":
			ev.id = value
		case "event":
			ev.event = value
		case "data":
			ev.data += value
		}
	}
}

// next is the next event that is not a comment, within a few seconds.
func (s *stream) next() sseEvent {
	s.t.Helper()
	timeout := time.After(10 * time.Second)
	for {
		select {
		case ev, ok := <-s.events:
			if !ok {
				s.t.Fatalf("the stream ended")
			}
			if ev.comment != "" {
				continue
			}
			return ev
		case <-timeout:
			s.t.Fatalf("no event within 10 s")
		}
	}
}

// nextN is the next n events that are not comments.
func (s *stream) nextN(n int) []sseEvent {
	s.t.Helper()
	out := make([]sseEvent, 0, n)
	for len(out) < n {
		out = append(out, s.next())
	}
	return out
}

// quiet checks that no event but comments comes for a while.
func (s *stream) quiet(d time.Duration) {
	s.t.Helper()
	timeout := time.After(d)
	for {
		select {
		case ev, ok := <-s.events:
			if ok && ev.comment == "" {
				s.t.Fatalf("unexpected event %s %s %s", ev.id, ev.event, ev.data)
			}
			if !ok {
				return
			}
		case <-timeout:
			return
		}
	}
}
