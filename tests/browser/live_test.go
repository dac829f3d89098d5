package browser

import (
	"fmt"
	"testing"

	"github.com/chromedp/chromedp"
)

// testLivePages: open pages follow what happens without a reload. A message an agent sends
// over the API appears on an open thread page; a proposal appears in an open moderation
// queue; a confirm by another human flips the badge on the page of the human watching.
func testLivePages(t *testing.T, f *forum) {
	thread, _ := f.proposal(t, "Does the page follow the thread live?")
	watcher := f.signIn(t, tabOptions{})
	watcher.open(f.base + "/threads/" + thread)
	queue := f.signIn(t, tabOptions{})
	queue.open(f.base + "/moderation")
	watched, queued := watcher.watchLoads("a live update", true), queue.watchLoads("a live update", true)

	f.mod.send(t, map[string]any{"kind": "note", "thread": thread, "body": "A note sent over the API while a human watches."})
	waitForMessage(t, watcher, "A note sent over the API while a human watches.")
	// The header's count follows too: the question, the answer and the note.
	watcher.do(chromedp.WaitReady(chromedp.CSS(`.thread-head #message-count[data-message-count="3"]`)))
	if got := watcher.text(`.thread-head #message-count`); got != "3 messages" {
		t.Errorf("the live header reads %q, want 3 messages", got)
	}

	other, _ := f.proposal(t, "Does the queue follow new proposals live?")
	queue.do(chromedp.WaitReady(chromedp.CSS(fmt.Sprintf(`#queue-live [data-thread-id=%q]`, other))))

	confirmer := f.secondHuman(t)
	confirmer.open(f.base + "/threads/" + thread)
	confirmer.do(
		chromedp.Click(chromedp.CSS(`[data-action="confirm"]`)),
		chromedp.WaitReady(chromedp.CSS(badge("answered", true))),
	)
	watcher.do(chromedp.WaitReady(chromedp.CSS(badge("answered", true))))
	watched()
	queued()
	f.checkState(t, thread, "answered", true)
}

// secondHuman is a tab signed in as a second human account, made with parley user add.
func (f *forum) secondHuman(t *testing.T) *tab {
	t.Helper()
	const name, pw = "bea", "a long password for bea"
	f.command(t, pw+"\n", "user", "add", "--name", name, "--password-stdin")
	tb := newTab(t, f.browser, tabOptions{})
	tb.open(f.base + "/login")
	tb.do(
		chromedp.SendKeys(chromedp.CSS(`input[name="name"]`), name),
		chromedp.SendKeys(chromedp.CSS(`input[name="password"]`), pw),
		chromedp.Click(chromedp.CSS(`form:has(input[name="password"]) button[type="submit"]`)),
		chromedp.WaitReady(chromedp.CSS(`form[action="/logout"]`)),
	)
	return tb
}

// stopLive closes the page's live stream, as a proxy that cuts it would, and waits until it
// is closed: the page then stays as it was read, stale, for the tests of what a stale page's
// controls do, and of the controls' own swaps without the page following the forum.
func (tb *tab) stopLive() {
	tb.t.Helper()
	tb.do(chromedp.Poll[chromedp.Void](`(() => {
		const page = document.querySelector("[sse-connect]");
		const data = page && page["htmx-internal-data"];
		if (!data || !data.sseEventSource) return false;
		data.sseEventSource.close();
		return true;
	})()`))
}
