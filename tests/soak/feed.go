package soak

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"time"
)

// follower listens to /v1/feed for the whole run and resumes from the last event it got
// (Last-Event-ID) whenever the stream ends: a server killed, a database restarted. Every
// message written must come to it once.
type follower struct {
	base, token string
	client      *http.Client

	mu       sync.Mutex
	last     string // the id of the last event taken: where a new stream resumes
	messages map[int64]int
	streams  int
	resumes  map[string]int // resume events by reason
}

func newFollower(base, token string) *follower {
	return &follower{base: base, token: token, client: &http.Client{}, messages: map[int64]int{}, resumes: map[string]int{}}
}

// open reads until the stream's first event, so that the follower's start comes before any
// write; then it follows in the background until ctx ends.
func (f *follower) open(ctx context.Context) error {
	resp, err := f.connect(ctx)
	if err != nil {
		return err
	}
	ready := make(chan struct{})
	go func() {
		f.read(resp, ready)
		for ctx.Err() == nil {
			time.Sleep(100 * time.Millisecond)
			if resp, err := f.connect(ctx); err == nil {
				f.read(resp, nil)
			}
		}
	}()
	select {
	case <-ready:
		return nil
	case <-time.After(30 * time.Second):
		return errNoFeed
	}
}

type feedError string

func (e feedError) Error() string { return string(e) }

const errNoFeed = feedError("the feed sent no first event within 30 s")

func (f *follower) connect(ctx context.Context) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, f.base+"/v1/feed", nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+f.token)
	f.mu.Lock()
	if f.last != "" {
		req.Header.Set("Last-Event-ID", f.last)
	}
	f.mu.Unlock()
	resp, err := f.client.Do(req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		resp.Body.Close()
		return nil, feedError("feed: status " + resp.Status)
	}
	f.mu.Lock()
	f.streams++
	f.mu.Unlock()
	return resp, nil
}

// read takes the events of one stream until it ends.
func (f *follower) read(resp *http.Response, ready chan struct{}) {
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	var id, event string
	var data strings.Builder
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			f.take(id, event, data.String())
			if ready != nil && event == "open" {
				close(ready)
				ready = nil
			}
			id, event = "", ""
			data.Reset()
		case strings.HasPrefix(line, "id:"):
			id = strings.TrimSpace(line[3:])
		case strings.HasPrefix(line, "event:"):
			event = strings.TrimSpace(line[6:])
		case strings.HasPrefix(line, "data:"):
			data.WriteString(strings.TrimSpace(line[5:]))
		}
	}
}

func (f *follower) take(id, event, data string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	switch event {
	case "message":
		var m struct {
			ID string `json:"id"`
		}
		if json.Unmarshal([]byte(data), &m) == nil {
			if n, err := key(m.ID, "msg_"); err == nil {
				f.messages[n]++
			}
		}
	case "resume":
		var r struct {
			Cursor string `json:"cursor"`
			Reason string `json:"reason"`
		}
		if json.Unmarshal([]byte(data), &r) == nil {
			f.resumes[r.Reason]++
			if r.Cursor != "" {
				f.last = r.Cursor
			}
		}
		return
	}
	if id != "" {
		f.last = id
	}
}

// seen is how many times each message came, and over how many streams.
func (f *follower) seen() (map[int64]int, int, map[string]int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make(map[int64]int, len(f.messages))
	for k, v := range f.messages {
		out[k] = v
	}
	res := map[string]int{}
	for k, v := range f.resumes {
		res[k] = v
	}
	return out, f.streams, res
}
