package browser

import (
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// testQueueResults: in the queue, with and without JavaScript, each confirm leaves a visible
// result line, "Confirmed th_N as answered — Undo", that stays while the queue follows the
// forum live, and its Undo re-marks the thread back; Confirm selected confirms the rows
// ticked, each as its own operation, with a result line for each, and a live refresh keeps
// the rows ticked; the navigation counts what waits.
func testQueueResults(t *testing.T, f *forum) {
	withAndWithoutJavaScript(t, func(t *testing.T, js bool) {
		one, _ := f.proposal(t, fmt.Sprintf("Confirmed with a result line (js %t)?", js))
		two, _ := f.proposal(t, fmt.Sprintf("Confirmed when selected (js %t)?", js))
		tb := f.signIn(t, tabOptions{noJavaScript: !js})
		tb.open(f.base + "/moderation")
		before := tb.attr(`nav [data-queue-count]`, "data-queue-count")
		row := func(thread string) string { return fmt.Sprintf(`#queue-live [data-thread-id=%q]`, thread) }
		result := func(thread string) string { return fmt.Sprintf(`#queue-results [data-result=%q]`, thread) }

		loads := tb.watchLoads("a confirm in the queue", js)
		tb.do(
			clickLive(row(one)+` [data-action="confirm"]`),
			chromedp.WaitVisible(chromedp.CSS(result(one)+` [data-action="undo"]`)),
		)
		loads()
		if got := strings.Join(strings.Fields(tb.text(result(one))), " "); got != "Confirmed "+one+" as answered — Undo" {
			t.Errorf("the result line reads %q", got)
		}
		f.checkState(t, one, "answered", true)
		if js {
			// The live stream refreshes the lists at the confirm's event; the line stays.
			tb.do(chromedp.WaitNotPresent(chromedp.CSS(row(one) + ` [data-action="confirm"]`)))
			if tb.count(result(one)+` [data-action="undo"]`) != 1 {
				t.Error("the live refresh took the result line away")
			}
		} else if after := tb.attr(`nav [data-queue-count]`, "data-queue-count"); after == before {
			t.Errorf("the navigation still counts %s waiting after a confirm", after)
		}

		loads = tb.watchLoads("an Undo", js)
		undo := clickLive(result(one) + ` [data-action="undo"]`)
		if js {
			tb.do(undo, chromedp.WaitVisible(chromedp.CSS(fmt.Sprintf(`[data-undone=%q]`, one))))
		} else {
			tb.follow(undo) // the mark's redirect back to the queue
		}
		loads()
		f.checkState(t, one, "open", true)

		loads = tb.watchLoads("Confirm selected", js)
		tb.do(clickLive(row(two) + ` input[name="item"]`))
		if js {
			// A live refresh while a box is ticked keeps it ticked.
			three, _ := f.proposal(t, "Arriving while a box is ticked?")
			tb.do(chromedp.WaitVisible(chromedp.CSS(row(three) + ` [data-action="confirm"]`)))
			if tb.count(row(two)+` input[name="item"]:checked`) != 1 {
				t.Error("a live refresh of the queue unticked the selected row")
			}
		}
		tb.do(
			clickLive(`[data-action="confirm-selected"]`),
			chromedp.WaitVisible(chromedp.CSS(result(two)+` [data-action="undo"]`)),
		)
		loads()
		f.checkState(t, two, "answered", true)
		if js {
			// The list follows the confirm's event on the live stream, as after the first
			// confirm above: a moment after the result line, on a busy machine.
			tb.do(chromedp.WaitNotPresent(chromedp.CSS(row(two) + ` [data-action="confirm"]`)))
		} else if tb.count(row(two)+` [data-action="confirm"]`) != 0 {
			t.Error("the selected thread is still offered for confirmation")
		}
	})
}
