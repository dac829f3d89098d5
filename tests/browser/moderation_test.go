package browser

import (
	"fmt"
	"slices"
	"testing"

	"github.com/chromedp/chromedp"
)

// testModerationQueue: the queue lists the models' proposals oldest first; one is confirmed
// and another re-marked from the queue, and after that neither is in it any more.
func testModerationQueue(t *testing.T, f *forum) {
	older, _ := f.proposal(t, "First in the queue?")
	newer, _ := f.proposal(t, "Second in the queue?")
	tb := f.signIn(t, tabOptions{})
	tb.open(f.base + "/moderation")
	tb.stopLive() // the controls' own swaps: live, a confirmed row would leave the queue at once
	rows := tb.attrs(`[data-thread-id]`, "data-thread-id")
	o, n := slices.Index(rows, older), slices.Index(rows, newer)
	if o < 0 || n < 0 || o > n {
		t.Errorf("the queue lists %v: want %s before %s, oldest first", rows, older, newer)
	}
	row := func(thread string) string { return fmt.Sprintf(`[data-thread-id=%q]`, thread) }
	loads := tb.watchLoads("working the queue", true)
	tb.do(
		chromedp.Click(chromedp.CSS(row(older)+` [data-action="confirm"]`)),
		chromedp.WaitReady(chromedp.CSS(row(older)+` `+badge("answered", true))),
		chromedp.SetValue(chromedp.CSS(row(newer)+` select[name="state"]`), "decided"),
		chromedp.Click(chromedp.CSS(row(newer)+` [data-action="mark"]`)),
		chromedp.WaitReady(chromedp.CSS(row(newer)+` `+badge("decided", true))),
	)
	loads()
	f.checkState(t, older, "answered", true)
	f.checkState(t, newer, "decided", true)

	tb.open(f.base + "/moderation")
	for _, thread := range []string{older, newer} {
		if tb.count(row(thread)) != 0 {
			t.Errorf("thread %s is still in the queue after it was confirmed", thread)
		}
	}
}
