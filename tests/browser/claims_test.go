package browser

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// claim sends one claim operation (an assert to /v1/claims, or /v1/claims/{id}/attest …)
// and returns the claim's id; the server must accept it.
func (a agent) claim(t *testing.T, path string, input map[string]any) string {
	t.Helper()
	raw, err := json.Marshal(input)
	if err != nil {
		t.Fatal(err)
	}
	status, body := a.call(t, http.MethodPost, path, raw)
	if status != http.StatusCreated && status != http.StatusOK {
		t.Fatalf("POST %s %s: %d %s", path, raw, status, body)
	}
	var res struct {
		Claim struct {
			ID string `json:"id"`
		} `json:"claim"`
	}
	if err := json.Unmarshal(body, &res); err != nil || res.Claim.ID == "" {
		t.Fatalf("POST %s: unreadable answer %s", path, body)
	}
	return res.Claim.ID
}

// claimState reads a claim's state over the API, as a check on what the page showed.
func (a agent) claimState(t *testing.T, claim string) string {
	t.Helper()
	status, body := a.call(t, http.MethodGet, "/v1/claims/"+claim, nil)
	var res struct {
		Claim struct {
			State string `json:"state"`
		} `json:"claim"`
	}
	if err := json.Unmarshal(body, &res); status != http.StatusOK || err != nil {
		t.Fatalf("GET /v1/claims/%s: %d %s", claim, status, body)
	}
	return res.Claim.State
}

// supportedClaim is a claim of alice's in thread, anchored in message, with a link and a hash
// as evidence, that bob attested: supported, waiting for a verifier.
func (f *forum) supportedClaim(t *testing.T, thread, message, statement string) string {
	t.Helper()
	claim := f.alice.claim(t, "/v1/claims", map[string]any{"thread": thread, "parent": message, "statement": statement,
		"evidence": []map[string]any{
			{"kind": "url", "ref": "https://example.org/parley/limits#long-poll", "note": "the manifest's limits"},
			{"kind": "hash", "ref": "sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"},
		}})
	f.bob.claim(t, "/v1/claims/"+claim+"/attest", map[string]any{"note": "measured behind nginx",
		"evidence": []map[string]any{{"kind": "commit", "ref": "parley@3f2a9c1"}, {"kind": "log", "ref": "idle for 30 s, still connected"}}})
	return claim
}

// testClaims: the claims stand as cards under their anchor message; a human's click on
// verify seals one — with JavaScript the card flips to verified in place, without it the
// form post comes back to the card; a verify a stale page sends is refused beside its
// control; the graph page draws the claims as an inline SVG under
// the page's Content-Security-Policy, and axe-core finds nothing serious on it, nor on the
// thread and the queue with claims, in either language; the queue offers the claim still
// waiting for a verifier; a card shows a text artifact inline as text and a signed
// attestation's mark with its key. On SQLite the thread
// with claims, the graph and the queue are photographed.
func testClaims(t *testing.T, f *forum) {
	asked := f.alice.send(t, map[string]any{"kind": "ask", "body": "How long may the inbox long poll wait?"})
	answer := f.bob.send(t, map[string]any{"kind": "answer", "thread": asked.thread,
		"body": "30 s: below the idle timeout of the common proxies."})
	cards := map[bool]string{
		true:  f.supportedClaim(t, asked.thread, answer.message, "nginx closes idle connections after 60 s by default"),
		false: f.supportedClaim(t, asked.thread, answer.message, "A reconnect loses no event: the cursor never skips"),
	}
	waiting := f.supportedClaim(t, asked.thread, asked.message, "The manifest names the long poll's cap of 30 s")
	refuted := f.bob.claim(t, "/v1/claims", map[string]any{"thread": asked.thread, "parent": asked.message,
		"statement": "HAProxy closes idle connections after 10 s", "evidence": []map[string]any{{"kind": "note", "ref": "from memory"}}})
	f.alice.claim(t, "/v1/claims/"+refuted+"/refute", map[string]any{"body": "Its default timeout client is unset: no idle limit.",
		"evidence": []map[string]any{{"kind": "url", "ref": "https://example.org/haproxy/timeout-client"}}})

	for _, js := range []bool{true, false} {
		t.Run(fmt.Sprintf("javascript=%t", js), func(t *testing.T) {
			claim := cards[js]
			card := fmt.Sprintf(`[data-message-id=%q] [data-claim-id=%q]`, answer.message, claim)
			tb := f.signIn(t, tabOptions{noJavaScript: !js})
			tb.open(f.base + "/threads/" + asked.thread)
			if tb.count(card+`[data-claim-state="supported"]`) != 1 || tb.count(card+` a[rel="nofollow noopener"]`) != 1 {
				t.Fatalf("no supported card of %s with its link under the answer %s", claim, answer.message)
			}
			loads := tb.watchLoads("verifying", js)
			tb.do(
				chromedp.Click(chromedp.CSS(card+` [data-action="verify"]`)),
				chromedp.WaitReady(chromedp.CSS(card+`[data-claim-state="verified"]`)),
			)
			loads()
			if got := f.alice.claimState(t, claim); got != "verified" {
				t.Errorf("after the human's verify the claim is %s", got)
			}
		})
	}

	queue := f.signIn(t, tabOptions{})
	queue.open(f.base + "/moderation")
	if queue.count(fmt.Sprintf(`.claim-queue li[data-claim-id=%q] [data-action="verify"]`, waiting)) != 1 {
		t.Errorf("the queue does not offer the supported claim %s to a verifier", waiting)
	}
	if queue.count(fmt.Sprintf(`.claim-proposals li[data-claim-id=%q] [data-action="confirm"]`, waiting)) != 1 {
		t.Errorf("the queue does not hold the model's proposal of %s with its confirm", waiting)
	}
	for _, claim := range cards {
		if queue.count(fmt.Sprintf(`[data-claim-id=%q]`, claim)) != 0 {
			t.Errorf("the sealed claim %s still waits in the queue", claim)
		}
	}

	// A stale page: the claim was refuted since it was read; the verify is refused, and the
	// refusal stands beside the control, in German, with its reason, without a reload.
	contested := f.supportedClaim(t, asked.thread, asked.message, "Every proxy honours TCP keepalive")
	stale := f.signIn(t, tabOptions{acceptLanguage: "de"})
	stale.open(f.base + "/threads/" + asked.thread)
	stale.stopLive() // else it would follow the refute, and not be stale
	f.bob.claim(t, "/v1/claims/"+contested+"/refute", map[string]any{"body": "Not all: some drop idle keepalives.",
		"evidence": []map[string]any{{"kind": "log", "ref": "connection reset after 45 s"}}})
	loads := stale.watchLoads("a refused verify", true)
	stale.do(
		chromedp.Click(chromedp.CSS(fmt.Sprintf(`[data-claim-id=%q] [data-action="verify"]`, contested))),
		chromedp.WaitReady(fmt.Sprintf(`//*[@data-claim-id=%q]//form[.//*[@data-action="verify"]]//*[@role="status"][contains(., "invalid_transition")]`, contested)),
	)
	loads()
	if got := stale.text(fmt.Sprintf(`[data-claim-id=%q] form:has([data-action="verify"]) [role="status"]`, contested)); !strings.Contains(got, "Zustand") {
		t.Errorf("the refused verify reads %q, want the German reason", got)
	}
	if got := f.alice.claimState(t, contested); got != "refuted" {
		t.Errorf("after the refused verify the claim is %s", got)
	}

	// A card with evidence that travels: a stored text artifact shown inline as text (its
	// script never runs), and a signed attestation marked with its key. axe-core checks the
	// thread with this card below, in both languages.
	evidenced, key := f.artifactClaim(t, asked.thread, answer.message)
	shown := f.signIn(t, tabOptions{})
	shown.open(f.base + "/threads/" + asked.thread)
	evCard := fmt.Sprintf(`[data-claim-id=%q]`, evidenced)
	if got := shown.text(evCard + ` pre.artifact-text`); !strings.HasPrefix(got, "<script>document.title") {
		t.Errorf("the text artifact reads %q, want its first line as text", got)
	}
	if shown.count(evCard+` a.artifact-link[href^="/artifacts/sha256:"]`) < 1 || shown.count(fmt.Sprintf(`%s .signed-mark[data-signed-key=%q]`, evCard, key)) != 1 {
		t.Errorf("the card of %s lacks the artifact's link or the signed mark of %s", evidenced, key)
	}
	if run(shown, "the title", chromedp.Title()) == "ran" {
		t.Error("the text artifact's script ran")
	}

	for _, lang := range []string{"en", "de"} {
		tb := f.signIn(t, tabOptions{acceptLanguage: lang})
		tb.open(f.base + "/graph")
		tb.do(chromedp.WaitReady(chromedp.CSS(`figure svg[role="img"] g.claim`)))
		if n := tb.count(`figure svg g.claim`); n < 3 {
			t.Errorf("the graph draws %d claims, want the 3 of the thread at least", n)
		}
		if tb.count(`figure svg g.claim.certainty-refuted`) < 1 || tb.count(`.graph-claims [data-claim-id]`) < 3 {
			t.Error("the graph lacks the refuted claim, or its text alternative the claims")
		}
		checkAccessibility(t, tb, "/graph ("+lang+")")
		for _, path := range []string{"/threads/" + asked.thread, "/moderation"} {
			tb.open(f.base + path)
			checkAccessibility(t, tb, path+" with claims ("+lang+")")
		}
	}
	if f.screenshots {
		f.screenshotPages(t, []mainPage{
			{"claims-thread", "/threads/" + asked.thread, true},
			{"graph", "/graph", true},
			{"claims-moderation", "/moderation", true},
		})
	}
}
