package soak

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"
)

// bodies are what agents say around their markers: realistic lengths, words to search.
var bodies = []string{
	"The migration ran twice on the staging database; the second run found the lock table already in place and stopped. Is the lock meant to be taken per schema or per cluster?",
	"Measured again with the cache warm: the median stays at 4 ms, the tail moved from 40 to 25 ms. The difference is the first query after a reconnect.",
	"I read the logs from the last hour. The retries come from one client that sends without a deadline and waits forever when the server restarts.",
	"Agreed with the approach, with one caveat: the index on (thread_id, id) is what the read uses, so the new column must not change its order.",
	"Short answer: no. The inbox lists a thread once, at the position of its last change of turn; older positions are not kept.",
	"A note for whoever picks this up next: the test data lives in the benchdata package and is generated, never checked in.",
}

// agent is one speaker: an identity's token with an extension of its own, over one transport.
type agent struct {
	n     int
	token string
	ext   string
	tr    transport
	r     *run
	rng   *rand.Rand

	own    *topic
	since  string         // the inbox cursor: every read goes on from the last
	seen   map[int64]bool // threads the inbox listed, over the whole run
	mine   map[int64][]int64
	failed int // consecutive calls without an answer
}

// startInbox reads the inbox once before anyone writes: every thread of the run changes after
// this cursor, so the reads that follow it must list every thread that is this agent's turn.
func (a *agent) startInbox(ctx context.Context) error {
	for ctx.Err() == nil {
		if done, err := a.readInbox(ctx, 0); err != nil {
			return err
		} else if done {
			return nil
		}
	}
	return ctx.Err()
}

// work runs until ctx ends; the call it is in may finish (and retry) until drain ends.
func (a *agent) work(ctx, drain context.Context) {
	for ctx.Err() == nil {
		switch r := a.rng.IntN(100); {
		case r < 55:
			a.send(drain)
		case r < 70:
			_, _ = a.readInbox(drain, 0)
		case r < 75:
			_, _ = a.readInbox(drain, 1+a.rng.IntN(2)) // a long poll
		case r < 87:
			a.readThread(drain)
		case r < 94:
			a.readEvents(drain)
		default:
			a.call(drain, "list_threads", map[string]any{"limit": 20})
		}
	}
}

// call makes one call, counting what came of it, and pauses after a failure so that a server
// on its way back is not flooded.
func (a *agent) call(ctx context.Context, op string, args map[string]any) answer {
	ans := a.tr.call(ctx, a.token, op, args)
	if ctx.Err() != nil && ans.failed != nil {
		return ans
	}
	a.r.stats.count(a.tr.name(), op, ans)
	if ans.replayed {
		a.r.stats.add("replayed writes", 1)
	}
	if ans.retryable() {
		a.failed++
		pause := time.Duration(min(a.failed, 10)) * time.Duration(20+a.rng.IntN(60)) * time.Millisecond
		select {
		case <-ctx.Done():
		case <-time.After(pause):
		}
	} else {
		a.failed = 0
	}
	if !ans.ok() && !ans.retryable() {
		a.r.problem("agent %d (%s) %s %v: refused %s", a.n, a.tr.name(), op, args, ans.reason)
	}
	return ans
}

// send makes one write and retries it until it is acknowledged or the run is over.
func (a *agent) send(ctx context.Context) {
	var t *topic
	kind := "ask"
	if a.own != nil && !a.r.board.full(a.own) {
		switch r := a.rng.IntN(100); {
		case r < 6:
			t, kind = a.own, "decide"
		default:
			if other := a.r.board.pick(a.n, a.rng); other != nil {
				t, kind = other, []string{"answer", "answer", "answer", "note", "note", "ask"}[a.rng.IntN(6)]
			}
		}
	}
	var thread int64
	if t != nil {
		thread = t.id
	}
	w := a.r.ledger.open(a.n, a.tr.name(), kind, thread, bodies[a.rng.IntN(len(bodies))])
	body := w.body
	env := map[string]any{"kind": kind, "body": body, "from": map[string]string{"extension": a.ext},
		"provenance": map[string]string{"client": "parley-soak"}, keyArgument: w.key}
	if t != nil {
		env["thread"] = "th_" + strconv.FormatInt(t.id, 10)
		if kind != "decide" {
			// The thread's first message, written by its creator: never this agent's own.
			env["parent"] = "msg_" + strconv.FormatInt(t.root, 10)
		}
	}
	for ctx.Err() == nil {
		a.r.ledger.attempt(w)
		ans := a.call(ctx, "send", env)
		if ans.retryable() {
			continue
		}
		if !ans.ok() {
			return
		}
		var res sent
		if err := json.Unmarshal(ans.result, &res); err != nil {
			a.r.problem("agent %d: an acknowledged send with an unreadable answer: %v", a.n, err)
			return
		}
		id, err1 := key(res.Message.ID, "msg_")
		th, err2 := key(res.Message.Thread, "th_")
		if err1 != nil || err2 != nil || res.Message.Body != body {
			a.r.problem("agent %d: the acknowledgement %+v does not name the message sent", a.n, res.Message)
			return
		}
		a.r.ledger.ack(w, id, th)
		a.mine[th] = append(a.mine[th], id)
		if t != nil {
			a.r.board.wrote(t)
		} else {
			a.own = &topic{id: th, root: id, creator: a.n}
			a.r.board.add(a.own)
		}
		return
	}
}

// readInbox reads the inbox from the agent's cursor, waiting up to wait seconds; done is
// false while the server says there is more.
func (a *agent) readInbox(ctx context.Context, wait int) (done bool, err error) {
	args := map[string]any{"extension": a.ext, "limit": 100}
	if a.since != "" {
		args["since"] = a.since
	}
	if wait > 0 {
		args["wait_seconds"] = wait
	}
	ans := a.call(ctx, "inbox", args)
	if !ans.ok() {
		return false, fmt.Errorf("inbox: %v", ans)
	}
	var page inboxPage
	if err := json.Unmarshal(ans.result, &page); err != nil || page.Cursor == "" {
		a.r.problem("agent %d: an inbox answer without a cursor: %.200s", a.n, ans.result)
		return false, fmt.Errorf("unreadable inbox")
	}
	for _, it := range page.Items {
		if id, err := key(it.Thread.ID, "th_"); err == nil {
			a.seen[id] = true
		}
	}
	a.since = page.Cursor
	return !page.More, nil
}

// readThread reads a thread this agent wrote to: every message it had acknowledged there
// before the read must be in the tree, once.
func (a *agent) readThread(ctx context.Context) {
	var th int64
	for id := range a.mine {
		th = id // map order is random enough
		break
	}
	if th == 0 {
		return
	}
	want := append([]int64(nil), a.mine[th]...)
	ans := a.call(ctx, "read_thread", map[string]any{"thread": "th_" + strconv.FormatInt(th, 10)})
	if !ans.ok() {
		return
	}
	var read struct {
		Thread   wireThread     `json:"thread"`
		Messages []*wireMessage `json:"messages"`
	}
	if err := json.Unmarshal(ans.result, &read); err != nil {
		a.r.problem("agent %d: unreadable thread th_%d: %v", a.n, th, err)
		return
	}
	count := map[string]int{}
	walkTree(read.Messages, func(m *wireMessage) { count[m.ID]++ })
	for _, id := range want {
		if n := count["msg_"+strconv.FormatInt(id, 10)]; n != 1 {
			a.r.problem("agent %d (%s): its acknowledged msg_%d is %d times in th_%d", a.n, a.tr.name(), id, n, th)
		}
	}
	// The thread is read with its messages in one snapshot: its count is the tree's.
	if read.Thread.MessageCount != len(count) {
		a.r.stats.add("torn thread reads", 1)
		a.r.problem("agent %d (%s): th_%d read with message_count %d and %d messages", a.n, a.tr.name(), th, read.Thread.MessageCount, len(count))
	}
}

func (a *agent) readEvents(ctx context.Context) {
	for th := range a.mine {
		a.call(ctx, "read_events", map[string]any{"thread": "th_" + strconv.FormatInt(th, 10)})
		return
	}
}

func walkTree(ms []*wireMessage, f func(*wireMessage)) {
	for _, m := range ms {
		f(m)
		walkTree(m.Replies, f)
	}
}

func extension(n int) string { return "soak-" + strconv.Itoa(n) }

func markerOf(body string) (string, bool) {
	if !strings.HasPrefix(body, "[soak ") {
		return "", false
	}
	end := strings.IndexByte(body, ']')
	if end < 0 {
		return "", false
	}
	return body[:end+1], true
}
