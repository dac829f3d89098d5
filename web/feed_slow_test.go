//go:build unix

package web_test

import (
	"net"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/parleyforum/parley/protocol"
	"github.com/parleyforum/parley/storage"
	"github.com/parleyforum/parley/storage/storagetest"
	"github.com/parleyforum/parley/web"
)

// A listener that does not read stalls nobody: every send is answered, another listener gets
// every event, and the slow one, once it reads again, gets what was buffered for it, then a
// resume event with the cursor of the last event it got; resuming from there gives the rest,
// with no gap and no duplicate.
func TestFeedSlowListenerStallsNobody(t *testing.T) {
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		limits := protocol.DefaultLimits()
		limits.WritesPerMinute = 1 << 20
		f := newFeedForum(t, db, web.Options{Limits: limits, Feed: web.FeedOptions{
			Buffer: 4, SlowAfter: 200 * time.Millisecond, SocketBuffer: 4096, WriteTimeout: time.Minute}})
		slowClient := &http.Client{Transport: &http.Transport{DialContext: (&net.Dialer{Control: smallReceiveBuffer}).DialContext}}
		slow := f.openFeed("/v1/feed", f.reader, "", slowClient)
		fast := f.openFeed("/v1/feed", f.reader, "", nil).start()
		fast.next() // open

		const notes = 200
		th, _ := f.ask(f.alice, "A thread with many notes")
		body := strings.Repeat("a note long enough to fill buffers quickly ", 11)
		for i := 0; i < notes; i++ {
			f.send(f.bob, `{"kind":"note","thread":"`+th+`","body":"`+body+`"}`)
		}
		all := fast.nextN(notes + 2) // the ask, its state event, the notes
		ids := map[string]bool{}
		for _, ev := range all {
			ids[ev.id] = true
		}
		if len(ids) != notes+2 {
			t.Fatalf("the fast listener got %d distinct events of %d", len(ids), notes+2)
		}

		time.Sleep(time.Second) // the slow listener's reading half gives up on it
		var got []sseEvent
		var resume sseEvent
		for {
			ev, ok := slow.readEvent()
			if !ok {
				break
			}
			if ev.event == "resume" {
				resume = ev
				continue
			}
			if ev.event != "open" && ev.comment == "" {
				got = append(got, ev)
			}
		}
		if resume.event == "" || resume.field(t, "reason") != "behind" || len(got) == 0 || len(got) >= notes+2 ||
			resume.field(t, "cursor") != got[len(got)-1].id {
			t.Fatalf("the slow listener got %d events and then %+v; want fewer than %d, then resume behind at the last one's cursor",
				len(got), resume, notes+2)
		}
		t.Logf("the slow listener got %d of %d events before it was told to resume", len(got), notes+2)
		again := f.openFeed("/v1/feed", f.reader, resume.field(t, "cursor"), nil).start()
		again.next() // open
		got = append(got, again.nextN(notes+2-len(got))...)
		for i, ev := range got {
			if ev.id != all[i].id || ev.data != all[i].data {
				t.Fatalf("event %d: %s, want %s as the fast listener got it", i, ev.id, all[i].id)
			}
		}
		again.quiet(300 * time.Millisecond)
	})
}

// smallReceiveBuffer makes the client's socket buffer little, so that a client that does not
// read fills it soon.
func smallReceiveBuffer(_, _ string, c syscall.RawConn) error {
	var err error
	if cerr := c.Control(func(fd uintptr) {
		err = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 2048)
	}); cerr != nil {
		return cerr
	}
	return err
}
