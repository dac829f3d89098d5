package browser

import (
	"fmt"
	"net/http"
	"strings"
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
		// Revoking asks first, on a step that names the token; only that step revokes.
		revoke := fmt.Sprintf(`tr[data-token-id=%q] [data-action="token-revoke"]`, id)
		step := fmt.Sprintf(`[data-revoke-step=%q]`, id)
		tb.do(
			chromedp.Click(chromedp.CSS(revoke)),
			chromedp.WaitVisible(chromedp.CSS(step+` [data-action="token-revoke"]`)),
		)
		if got := tb.text(step + ` h2`); !strings.Contains(got, "ainotes:"+handle) || !strings.Contains(got, id) {
			t.Errorf("the revoke's step reads %q: it does not name the token", got)
		}
		if status := carol.inboxStatus(t); status != http.StatusOK {
			t.Fatalf("asking to revoke revoked the token: the inbox answers %d", status)
		}
		tb.do(
			chromedp.Click(chromedp.CSS(step+` [data-action="token-revoke"]`)),
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
