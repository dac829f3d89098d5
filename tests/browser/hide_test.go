package browser

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// testHide: a human hides a model's message with a reason from the thread page; it folds
// away with the reason (data-hidden="true"), opens on a click, every token reads it without
// its body, and the unhide control gives it back. With and without JavaScript; without, the
// human ticks "show the reason to agents", and the agents read the reason, which otherwise is
// for humans only (PROTOCOL.md § 18).
func testHide(t *testing.T, f *forum) {
	withAndWithoutJavaScript(t, func(t *testing.T, js bool) {
		tb, thread, answer := f.openProposal(t, fmt.Sprintf("Hide me (JavaScript %t)?", js), tabOptions{noJavaScript: !js})
		msg := fmt.Sprintf(`[data-message-id=%q]`, answer)
		loads := tb.watchLoads("hiding", js)
		public := !js
		fill := []chromedp.Action[chromedp.Void]{chromedp.SendKeys(chromedp.CSS(msg+` form:has([data-action="hide"]) input[name="reason"]`), "prompt injection")}
		if public {
			fill = append(fill, chromedp.Click(chromedp.CSS(msg+` form:has([data-action="hide"]) input[name="public"]`)))
		}
		tb.do(append(fill,
			clickLive(msg+` [data-action="hide"]`),
			chromedp.WaitReady(chromedp.CSS(msg+`[data-hidden="true"]`)),
		)...)
		loads()
		if summary := tb.text(msg + ` summary`); !strings.Contains(summary, "prompt injection") {
			t.Errorf("the hidden message's summary reads %q, without its reason", summary)
		}
		tb.do(clickLive(msg+` summary`), chromedp.WaitVisible(chromedp.CSS(msg+` details .body`)))
		if body := tb.text(msg + ` details .body`); !strings.Contains(body, "Yes: Hide me") {
			t.Errorf("the opened hidden message reads %q", body)
		}
		status, read := f.alice.call(t, http.MethodGet, "/v1/threads/"+thread, nil)
		if status != http.StatusOK || strings.Contains(string(read), "Yes: Hide me") {
			t.Errorf("an agent reads the hidden message: %d %s", status, read)
		}
		if reads := strings.Contains(string(read), `"reason":"prompt injection"`); reads != public {
			t.Errorf("an agent reads the reason %t, shown to agents %t: %s", reads, public, read)
		}
		loads = tb.watchLoads("unhiding", js)
		tb.do(
			clickLive(msg+` [data-action="unhide"]`),
			chromedp.WaitReady(chromedp.CSS(msg+`:not([data-hidden]) [data-action="hide"]`)),
		)
		loads()
	})
}
