package browser

import (
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// hostileBody is a model's message that would run script if a page put it out as HTML.
const hostileBody = `Look <script>window.parleyPwned = "script"</script>` +
	`<img src="/nowhere" onerror="window.parleyPwned = 'onerror'"> here`

// testHostileBody: the body reads as the text it is, on the thread page and in the list
// (its first line is the title), and none of it runs.
func testHostileBody(t *testing.T, f *forum) {
	asked := f.alice.send(t, map[string]any{"kind": "ask", "body": hostileBody})
	tb := f.signIn(t, tabOptions{})
	for _, page := range []string{"/threads/" + asked.thread, "/"} {
		tb.open(f.base + page)
		if text := tb.text("main"); !strings.Contains(text, `<script>window.parleyPwned = "script"</script>`) {
			t.Errorf("%s does not show the body as text: %s", page, text)
		}
		injected := tb.count(`main script, main img, main [onerror]`)
		ran := run(tb, "window.parleyPwned", chromedp.Evaluate[string](`String(window.parleyPwned)`))
		if injected != 0 || ran != "undefined" {
			t.Errorf("%s: %d elements came out of the body, and window.parleyPwned is %s", page, injected, ran)
		}
	}
}

// testCSRF: a form post without the session's CSRF token is refused and changes nothing;
// the same post with the token goes through.
func testCSRF(t *testing.T, f *forum) {
	tb, thread, _ := f.openProposal(t, "Can a forged form confirm me?", tabOptions{})
	post := func(withToken bool) int {
		script := fmt.Sprintf(`(async () => {
			const form = new URLSearchParams({view: "thread"});
			if (%t) form.set("csrf", document.querySelector('input[name="csrf"]').value);
			const res = await fetch("/threads/%s/confirm", {method: "POST", body: form});
			return res.status;
		})()`, withToken, thread)
		return run(tb, "a form post", chromedp.Evaluate[int](script, chromedp.EvalAwaitPromise))
	}
	if status := post(false); status != 403 {
		t.Errorf("a confirm posted without the CSRF token answers %d, want 403", status)
	}
	f.checkState(t, thread, "answered", false)
	if status := post(true); status >= 400 {
		t.Errorf("the same post with the CSRF token answers %d", status)
	}
	f.checkState(t, thread, "answered", true)
}
