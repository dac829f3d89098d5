package browser

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/chromedp/chromedp"
)

// testTokens: an administrator creates an agent token on /tokens, sees its secret once, the
// agent can use it, and after a revoke it cannot; with and without JavaScript.
func testTokens(t *testing.T, f *forum) {
	withAndWithoutJavaScript(t, func(t *testing.T, js bool) {
		handle := fmt.Sprintf("carol-%t", js)
		tb := f.signIn(t, tabOptions{noJavaScript: !js})
		tb.open(f.base + "/tokens")
		loads := tb.watchLoads("creating a token", js)
		tb.do(
			chromedp.SendKeys(chromedp.CSS(`input[name="handle"]`), handle),
			chromedp.Click(chromedp.CSS(`[data-action="token-create"]`)),
			chromedp.WaitReady(chromedp.CSS(`[data-token-secret]`)),
		)
		loads()
		secret := tb.text(`[data-token-secret]`)
		id := tb.attr(`[data-token-secret]`, "data-token-id")
		carol := agent{base: f.base, token: secret}
		if status := carol.inboxStatus(t); status != http.StatusOK {
			t.Fatalf("the secret shown on /tokens (%q) reads the inbox with status %d, want 200", secret, status)
		}
		revoke := fmt.Sprintf(`tr[data-token-id=%q] [data-action="token-revoke"]`, id)
		tb.do(
			chromedp.Click(chromedp.CSS(revoke)),
			chromedp.WaitNotPresent(chromedp.CSS(revoke)),
		)
		if tb.count(`[data-token-secret]`) != 0 {
			t.Error("the secret is still on the page after the next action; it is shown once")
		}
		if status := carol.inboxStatus(t); status != http.StatusUnauthorized {
			t.Errorf("the revoked token reads the inbox with status %d, want 401", status)
		}
	})
}
