package web_test

import (
	"net"
	"net/http"
	"net/url"
	"slices"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/parleyforum/parley/protocol"
	"github.com/parleyforum/parley/storage"
	"github.com/parleyforum/parley/storage/storagetest"
	"github.com/parleyforum/parley/web"
)

// § 13 feed over HTTP: what it delivers, in which order and with which types.
func TestFeedDelivers(t *testing.T) {
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		f := newForum(t, db, protocol.Limits{})
		s := f.openFeed("/v1/feed", f.reader, "", nil).start()
		open := s.next()
		if open.event != "open" || open.id == "" || open.field(t, "cursor") != open.id {
			t.Fatalf("first event: %+v", open)
		}
		th, msg := f.ask(f.alice, "Which port?")
		answer := f.send(f.bob, `{"kind":"answer","thread":"`+th+`","body":"8080."}`).at("message", "id")
		f.must(f.post("/v1/threads/"+th+"/confirm", f.mod, ""), http.StatusOK)

		got := s.nextN(5)
		want := []struct{ event, what string }{
			{"message", msg}, {"state", "ask"}, {"message", answer}, {"state", "answer"}, {"state", "confirm"},
		}
		ids := []string{open.id}
		for i, w := range want {
			ev := got[i]
			what := ev.field(t, "id")
			if ev.event == "state" {
				what = ev.field(t, "act")
			}
			if ev.event != w.event || what != w.what || ev.field(t, "thread") != th {
				t.Errorf("event %d: %s %s, want %s %s: %s", i, ev.event, what, w.event, w.what, ev.data)
			}
			if slices.Contains(ids, ev.id) || ev.id == "" {
				t.Errorf("event %d: id %q is not new", i, ev.id)
			}
			ids = append(ids, ev.id)
		}
		s.quiet(300 * time.Millisecond)
	})
}

// Last-Event-ID (or ?since=) resumes with no gap and no duplicate, also on a new app over the
// same database (a restart: the cursor is the database's, nothing of it lives in the process).
func TestFeedResumes(t *testing.T) {
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		f := newForum(t, db, protocol.Limits{})
		first := f.openFeed("/v1/feed", f.reader, "", nil).start()
		from := first.next().id
		th, _ := f.ask(f.alice, "First question")
		f.send(f.bob, `{"kind":"note","thread":"`+th+`","body":"A note."}`)
		seen := first.nextN(3) // the ask, its state event, the note
		first.close()

		// Written while nobody listens.
		th2, _ := f.ask(f.alice, "Second question")
		f.send(f.bob, `{"kind":"answer","thread":"`+th2+`","body":"An answer."}`)

		all := f.openFeed("/v1/feed?since="+url.QueryEscape(from), f.reader, "", nil).start()
		if open := all.next(); open.event != "open" || open.id != from {
			t.Fatalf("resumed open event: %+v, want the cursor %s", open, from)
		}
		everything := all.nextN(7)
		if !slices.EqualFunc(everything[:3], seen, func(a, b sseEvent) bool { return a.id == b.id && a.data == b.data }) {
			t.Errorf("resuming from the start gave %v, then %v", seen, everything[:3])
		}
		all.quiet(300 * time.Millisecond)

		restarted := newForum(t, db, protocol.Limits{})
		// Last-Event-ID wins over since, as a reconnecting EventSource sends both.
		again := restarted.openFeed("/v1/feed?since="+url.QueryEscape(from), restarted.reader, seen[2].id, nil).start()
		again.next() // open
		rest := again.nextN(4)
		for i, ev := range rest {
			if ev.id != everything[3+i].id || ev.data != everything[3+i].data {
				t.Errorf("after a restart, event %d is %s %s, want %s %s", i, ev.id, ev.data, everything[3+i].id, everything[3+i].data)
			}
		}
		again.quiet(300 * time.Millisecond)
	})
}

// ?thread= narrows the feed to one thread.
func TestFeedOfOneThread(t *testing.T) {
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		f := newForum(t, db, protocol.Limits{})
		th1, _ := f.ask(f.alice, "One")
		th2, _ := f.ask(f.alice, "Two")
		s := f.openFeed("/v1/feed?thread="+th2, f.reader, "", nil).start()
		s.next() // open
		f.send(f.bob, `{"kind":"note","thread":"`+th1+`","body":"Elsewhere."}`)
		note := f.send(f.bob, `{"kind":"note","thread":"`+th2+`","body":"Here."}`).at("message", "id")
		if ev := s.next(); ev.event != "message" || ev.field(t, "id") != note {
			t.Fatalf("got %s %s, want the note %s", ev.event, ev.data, note)
		}
		s.quiet(300 * time.Millisecond)
	})
}

// An idle stream carries a comment line at least every heartbeat, and lives longer than the
// server's write timeout, which bounds each write, not the stream.
func TestFeedHeartbeat(t *testing.T) {
	f := newFeedForum(t, storagetest.Open(t, storage.SQLite), web.Options{
		Feed: web.FeedOptions{Heartbeat: 50 * time.Millisecond}, Timeouts: web.Timeouts{Write: 200 * time.Millisecond}})
	s := f.openFeed("/v1/feed", f.reader, "", nil)
	s.readEvent() // open
	for i := 0; i < 10; i++ {
		ev, ok := s.readEvent()
		if !ok || ev.comment != "heartbeat" {
			t.Fatalf("want a heartbeat comment, got %+v (%v)", ev, ok)
		}
	}
}

// The feed is refused as every route is, before anything is streamed: a token that reads is
// needed, and its input is checked.
func TestFeedRefusals(t *testing.T) {
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		f := newForum(t, db, protocol.Limits{})
		writer := f.token("ainotes:writer", false, "write", nil)
		cases := []struct {
			target, token, lastEventID string
			status                     int
			reason                     string
		}{
			{"/v1/feed", "", "", http.StatusUnauthorized, "unauthenticated"},
			{"/v1/feed", writer, "", http.StatusForbidden, "token_right_missing"},
			{"/v1/feed?since=made-up", f.reader, "", http.StatusBadRequest, "invalid_body"},
			{"/v1/feed", f.reader, "made-up", http.StatusBadRequest, "invalid_body"},
			{"/v1/feed?thread=msg_1", f.reader, "", http.StatusBadRequest, "invalid_body"},
			{"/v1/feed?colour=red", f.reader, "", http.StatusBadRequest, "invalid_body"},
			{"/v1/feed?thread=th_99", f.reader, "", http.StatusNotFound, "not_found"},
		}
		for _, c := range cases {
			r := f.do(request{method: http.MethodGet, target: c.target, token: c.token, header: map[string]string{"Last-Event-ID": c.lastEventID}})
			if r.status != c.status || r.reason() != c.reason {
				t.Errorf("%s (Last-Event-ID %q): %d %s, want %d %s", c.target, c.lastEventID, r.status, r.body, c.status, c.reason)
			}
		}
		if r := f.post("/v1/feed", f.reader, ""); r.status != http.StatusMethodNotAllowed || r.header.Get(fiber.HeaderAllow) != "GET" {
			t.Errorf("POST: %d %s", r.status, r.body)
		}
	})
}

// A listener holds a place of the long polls' limits until its stream ends.
func TestFeedListenersAreLimited(t *testing.T) {
	limits := protocol.DefaultLimits()
	limits.InboxWaitsPerIdentity = 2
	f := newFeedForum(t, storagetest.Open(t, storage.SQLite), web.Options{Limits: limits,
		Feed: web.FeedOptions{Heartbeat: 100 * time.Millisecond}})
	first := f.openFeed("/v1/feed", f.reader, "", nil)
	f.openFeed("/v1/feed", f.reader, "", nil)
	r := f.get("/v1/feed", f.reader)
	if r.status != http.StatusTooManyRequests || r.reason() != "rate_limited" || r.header.Get("Retry-After") == "" {
		t.Fatalf("a third listener: %d %s", r.status, r.body)
	}
	f.openFeed("/v1/feed", f.alice, "", nil) // another identity has places of its own
	first.close()
	deadline := time.Now().Add(10 * time.Second)
	for { // the server notices the closed stream at its next write: a heartbeat at the latest
		req, _ := http.NewRequest(http.MethodGet, f.base+"/v1/feed", nil)
		req.Header.Set("Authorization", "Bearer "+f.reader)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the closed listener's place is not free: %d", resp.StatusCode)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// A shutdown ends the streams, so that it never waits for a listener: the stream ends and
// the server stops.
func TestFeedEndsAtShutdown(t *testing.T) {
	db := storagetest.Open(t, storage.SQLite)
	f := &forum{t: t, db: db}
	app := web.New(web.Options{DB: db, Version: "test"})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- app.Listener(web.Listener(ln)) }()
	f.base = "http://" + ln.Addr().String()
	f.reader = f.token("ainotes:reader", false, "read", nil)
	s := f.openFeed("/v1/feed", f.reader, "", nil).start()
	s.next() // open
	stopped := make(chan error, 1)
	go func() { stopped <- app.ShutdownWithTimeout(30 * time.Second) }()
	select {
	case err := <-stopped:
		if err != nil {
			t.Errorf("shutdown: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the shutdown waits for the listener")
	}
	if err := <-served; err != nil {
		t.Errorf("serving: %v", err)
	}
	for ev := range s.events {
		if ev.comment == "" {
			t.Errorf("after the shutdown: %+v", ev)
		}
	}
}
