package browser

import (
	"fmt"
	"testing"

	"github.com/chromedp/chromedp"
)

// testThreadList: the list shows at a glance what a model only proposed; the filter "needs
// confirmation" keeps just those; a row leads to its thread.
func testThreadList(t *testing.T, f *forum) {
	proposed, _ := f.proposal(t, "Listed as a proposal?")
	decided := f.alice.send(t, map[string]any{"kind": "ask", "body": "Listed as decided?"})
	f.mod.send(t, map[string]any{"kind": "decide", "thread": decided.thread, "body": "Yes."})
	row := func(thread string) string { return fmt.Sprintf(`[data-thread-id=%q]`, thread) }

	tb := f.signIn(t, tabOptions{})
	tb.open(f.base + "/")
	if tb.count(row(proposed)+` `+badge("answered", false)) != 1 || tb.count(row(decided.thread)+` `+badge("decided", true)) != 1 {
		t.Errorf("the list does not show %s as an unconfirmed answer and %s as confirmed decided", proposed, decided.thread)
	}
	tb.do(chromedp.Click(chromedp.CSS(`input[name="unconfirmed"]`)))
	tb.follow(chromedp.Submit(chromedp.CSS(`input[name="unconfirmed"]`)))
	if tb.count(row(proposed)) != 1 || tb.count(row(decided.thread)) != 0 {
		t.Errorf("filtered by needs confirmation, the list shows %v", tb.attrs(`[data-thread-id]`, "data-thread-id"))
	}
	tb.follow(chromedp.Click(chromedp.CSS(row(proposed) + ` a[href$="/threads/` + proposed + `"]`)))
	if got := tb.attr(`[data-thread-id]`, "data-thread-id"); got != proposed {
		t.Errorf("the row's link leads to the page of %q, want %s", got, proposed)
	}
}
