package browser

import (
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

// maxTabs is how many presses of Tab may lead from the top of the thread page to its confirm
// control: the header, the messages' links and the reply form come first.
const maxTabs = 60

// testKeyboard: a person without a mouse reaches confirm with Tab, sees where the focus is,
// and confirms with Enter.
func testKeyboard(t *testing.T, f *forum) {
	tb, thread, _ := f.openProposal(t, "Confirmed from the keyboard?", tabOptions{})
	focused := func() string {
		return run(tb, "the focused control", chromedp.Evaluate[string](
			`document.activeElement.getAttribute("data-action") || ""`))
	}
	for range maxTabs {
		if focused() == "confirm" {
			break
		}
		tb.do(chromedp.KeyEvent(kb.Tab))
	}
	if focused() != "confirm" {
		t.Fatalf("%d presses of Tab did not reach the confirm control", maxTabs)
	}
	outline := run(tb, "the focus outline", chromedp.Evaluate[string](
		`(s => s.outlineStyle === "none" ? "" : s.outlineStyle + " " + s.outlineWidth)(getComputedStyle(document.activeElement))`))
	if outline == "" {
		t.Error("the focused confirm control shows no outline: the focus is not visible")
	}
	tb.do(
		chromedp.KeyEvent(kb.Enter),
		chromedp.WaitReady(chromedp.CSS(badge("answered", true))),
	)
	f.checkState(t, thread, "answered", true)
}
