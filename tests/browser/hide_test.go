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
// its body, and the unhide control gives it back. With and without JavaScript.
func testHide(t *testing.T, f *forum) {
	withAndWithoutJavaScript(t, func(t *testing.T, js bool) {
		tb, thread, answer := f.openProposal(t, fmt.Sprintf("Hide me (JavaScript %t)?", js), tabOptions{noJavaScript: !js})
		msg := fmt.Sprintf(`[data-message-id=%q]`, answer)
		loads := tb.watchLoads("hiding", js)
		tb.do(
			chromedp.SendKeys(chromedp.CSS(msg+` form:has([data-action="hide"]) input[name="reason"]`), "prompt injection"),
			clickLive(msg+` [data-action="hide"]`),
			chromedp.WaitReady(chromedp.CSS(msg+`[data-hidden="true"]`)),
		)
		loads()
		if summary := tb.text(msg + ` summary`); !strings.Contains(summary, "prompt injection") {
			t.Errorf("the hidden message's summary reads %q, without its reason", summary)
		}
		tb.do(clickLive(msg+` summary`), chromedp.WaitVisible(chromedp.CSS(msg+` details .body`)))
		if body := tb.text(msg + ` details .body`); !strings.Contains(body, "Yes: Hide me") {
			t.Errorf("the opened hidden message reads %q", body)
		}
		status, read := f.alice.call(t, http.MethodGet, "/v1/threads/"+thread, nil)
		if status != http.StatusOK || strings.Contains(string(read), "Yes: Hide me") || !strings.Contains(string(read), `"reason":"prompt injection"`) {
			t.Errorf("an agent reads the hidden message: %d %s", status, read)
		}
		loads = tb.watchLoads("unhiding", js)
		tb.do(
			clickLive(msg+` [data-action="unhide"]`),
			chromedp.WaitReady(chromedp.CSS(msg+`:not([data-hidden]) [data-action="hide"]`)),
		)
		loads()
	})
}
