package browser

import (
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// testRefusal: a control the operation layer refuses shows the refusal beside itself, in the
// reader's language and with its reason, on the page it stands on — not an error page. Two
// tabs show the same proposal; the first confirms it, then the second, which the protocol
// refuses (invalid_transition: it is confirmed already).
func testRefusal(t *testing.T, f *forum) {
	for _, c := range []struct {
		js   bool
		lang string
	}{{true, "en"}, {false, "de"}} {
		t.Run(fmt.Sprintf("javascript=%t,%s", c.js, c.lang), func(t *testing.T) {
			thread, _ := f.proposal(t, fmt.Sprintf("Confirmed twice (JavaScript %t)?", c.js))
			first := f.signIn(t, tabOptions{})
			stale := f.signIn(t, tabOptions{noJavaScript: !c.js, acceptLanguage: c.lang})
			for _, tb := range []*tab{first, stale} {
				tb.open(f.base + "/threads/" + thread)
			}
			if c.js {
				stale.stopLive() // else it would follow the first confirm, and not be stale
			}
			first.do(
				chromedp.Click(chromedp.CSS(`[data-action="confirm"]`)),
				chromedp.WaitReady(chromedp.CSS(badge("answered", true))),
			)
			refused := `form:has([data-action="confirm"])`
			stale.do(
				chromedp.Click(chromedp.CSS(`[data-action="confirm"]`)),
				// The reason is shown as it is, in either language.
				chromedp.WaitReady(`//form[.//*[@data-action="confirm"]]//*[@role="status"][contains(., "invalid_transition")]`),
			)
			text := stale.text(refused)
			english := strings.Contains(text, "cannot go to this state")
			if !strings.Contains(text, "invalid_transition") || english != (c.lang == "en") {
				t.Errorf("the refusal beside the control reads %q: want its reason and %s text", text, c.lang)
			}
			if lang := stale.attr("html", "lang"); lang != c.lang {
				t.Errorf("after the refusal the page has lang %q, want %q", lang, c.lang)
			}
			if n := stale.count(`[data-message-id]`); n != 2 {
				t.Errorf("after the refusal the page shows %d messages, want the thread's 2", n)
			}
			f.checkState(t, thread, "answered", true)
		})
	}
}
