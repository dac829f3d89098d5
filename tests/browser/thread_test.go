package browser

import (
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// proposal has alice ask and bob answer: the thread stands at "answered", a model's
// unconfirmed proposal.
func (f *forum) proposal(t *testing.T, question string) (thread, answer string) {
	t.Helper()
	asked := f.alice.send(t, map[string]any{"kind": "ask", "body": question})
	answered := f.bob.send(t, map[string]any{"kind": "answer", "thread": asked.thread,
		"body": "Yes: " + question, "provenance": map[string]any{"model": "test-model-7b", "client": "browser-test"}})
	return asked.thread, answered.message
}

// openProposal makes a model's proposal and opens its thread in a tab signed in
// as the administrator.
func (f *forum) openProposal(t *testing.T, question string, opts tabOptions) (tb *tab, thread, answer string) {
	t.Helper()
	thread, answer = f.proposal(t, question)
	tb = f.signIn(t, opts)
	tb.open(f.base + "/threads/" + thread)
	return tb, thread, answer
}

// badge is the selector of the thread's state badge in a given state and confirmation.
func badge(state string, confirmed bool) string {
	return fmt.Sprintf(`[data-state=%q][data-confirmed="%t"]`, state, confirmed)
}

// testReadThread: the page shows the model's proposal as unconfirmed, every message with its
// hook, the bodies and the provenance.
func testReadThread(t *testing.T, f *forum) {
	tb, _, answer := f.openProposal(t, "Is the read path cached?", tabOptions{})
	if n := tb.count(badge("answered", false)); n != 1 {
		t.Errorf("the thread page shows %d badges answered/unconfirmed, want 1", n)
	}
	if n := tb.count(`[data-message-id]`); n != 2 {
		t.Errorf("the thread page shows %d messages, want 2", n)
	}
	text := tb.text(fmt.Sprintf(`[data-message-id=%q]`, answer))
	for _, want := range []string{"Yes: Is the read path cached?", "ainotes:bob", "test-model-7b"} {
		if !strings.Contains(text, want) {
			t.Errorf("the answer reads %q, without %q", text, want)
		}
	}
}

// testConfirm: a click on confirm marks the proposal confirmed. With JavaScript htmx swaps
// the badge in place; without, the same control is a plain form post that comes back to the
// thread.
func testConfirm(t *testing.T, f *forum) {
	withAndWithoutJavaScript(t, func(t *testing.T, js bool) {
		tb, thread, _ := f.openProposal(t, fmt.Sprintf("Confirm me (JavaScript %t)?", js), tabOptions{noJavaScript: !js})
		loads := tb.watchLoads("confirming", js)
		tb.do(
			chromedp.Click(chromedp.CSS(`[data-action="confirm"]`)),
			chromedp.WaitReady(chromedp.CSS(badge("answered", true))),
		)
		loads()
		if loc := tb.location(); !strings.Contains(loc, "/threads/"+thread) {
			t.Errorf("after confirming the browser shows %s, not the thread", loc)
		}
		f.checkState(t, thread, "answered", true)
	})
}

// testMark: a human re-marks a model's wrong proposal; the new state is confirmed at once.
func testMark(t *testing.T, f *forum) {
	withAndWithoutJavaScript(t, func(t *testing.T, js bool) {
		tb, thread, _ := f.openProposal(t, fmt.Sprintf("Re-mark me (JavaScript %t)?", js), tabOptions{noJavaScript: !js})
		loads := tb.watchLoads("re-marking", js)
		tb.do(
			chromedp.SetValue(chromedp.CSS(`form:has([data-action="mark"]) select[name="state"]`), "rejected"),
			chromedp.Click(chromedp.CSS(`[data-action="mark"]`)),
			chromedp.WaitReady(chromedp.CSS(badge("rejected", true))),
		)
		loads()
		f.checkState(t, thread, "rejected", true)
	})
}

// testReply: a human writes a note under a model's question, then closes the thread with a
// message of the kind close; the note appears in the tree as a human's, and the badge turns
// closed and confirmed (a human's marking is never a proposal), with and without JavaScript.
func testReply(t *testing.T, f *forum) {
	withAndWithoutJavaScript(t, func(t *testing.T, js bool) {
		tb, thread, _ := f.openProposal(t, fmt.Sprintf("Reply to me (JavaScript %t)?", js), tabOptions{noJavaScript: !js})
		body := fmt.Sprintf("A human's note, JavaScript %t.", js)
		loads := tb.watchLoads("replying", js)
		tb.write("note", body)
		mine := waitForMessage(t, tb, body)
		if !strings.Contains(mine, "human:"+f.admin) {
			t.Errorf("the new message reads %q, without its author human:%s", mine, f.admin)
		}
		loads()

		tb.write("close", "Closed by a human.")
		tb.do(chromedp.WaitReady(chromedp.CSS(badge("closed", true))))
		f.checkState(t, thread, "closed", true)
	})
}

// write sends a message of a kind through the thread's own form (not a reply form under a
// message).
func (tb *tab) write(kind, body string) {
	tb.t.Helper()
	compose := `form:has([data-action="reply"]):not(:has(input[name="parent"]))`
	tb.do(
		chromedp.SetValue(chromedp.CSS(compose+` select[name="kind"]`), kind),
		chromedp.SendKeys(chromedp.CSS(compose+` textarea[name="body"]`), body),
		chromedp.Click(chromedp.CSS(compose+` [data-action="reply"]`)),
	)
}

// waitForMessage waits until a message with body appears and returns its text. It finds
// and reads the message in one step in the page: a live page may swap the message list
// again at any moment, and a node found in one step could be gone in the next.
func waitForMessage(t *testing.T, tb *tab, body string) string {
	t.Helper()
	sel := fmt.Sprintf(`//*[@data-message-id][.//*[contains(normalize-space(.), %q)]]`, body)
	read := fmt.Sprintf(`(() => {
		const node = document.evaluate(%q, document, null, XPathResult.FIRST_ORDERED_NODE_TYPE, null).singleNodeValue;
		return node ? node.innerText : false;
	})()`, sel)
	tb.do(chromedp.WaitReady(sel)) // waits out a form post's navigation, too
	return strings.TrimSpace(run(tb, "the message "+body, chromedp.Poll[string](read)))
}

// checkState reads the thread over the API: what the page showed is what happened.
func (f *forum) checkState(t *testing.T, thread, state string, confirmed bool) {
	t.Helper()
	got, gotConfirmed := f.mod.threadState(t, thread)
	if got != state || gotConfirmed != confirmed {
		t.Errorf("over the API thread %s is %s (confirmed %t), want %s (confirmed %t)", thread, got, gotConfirmed, state, confirmed)
	}
}

// testReplyUnderMessage: a human answers one message of the tree through its Reply link;
// the answer stands under that message, with and without JavaScript.
func testReplyUnderMessage(t *testing.T, f *forum) {
	withAndWithoutJavaScript(t, func(t *testing.T, js bool) {
		tb, _, answer := f.openProposal(t, fmt.Sprintf("Answer under the answer (JavaScript %t)?", js), tabOptions{noJavaScript: !js})
		body := fmt.Sprintf("A human under bob's answer, JavaScript %t.", js)
		form := fmt.Sprintf(`form:has(input[name="parent"][value=%q])`, answer)
		tb.do(
			chromedp.Click(chromedp.CSS(fmt.Sprintf(`[data-message-id=%q] a[href*="reply=%s"]`, answer, answer))),
			chromedp.WaitVisible(chromedp.CSS(form+` textarea[name="body"]`)),
			chromedp.SendKeys(chromedp.CSS(form+` textarea[name="body"]`), body),
			chromedp.Click(chromedp.CSS(form+` [data-action="reply"]`)),
		)
		waitForMessage(t, tb, body)
		// The reply's element stands in the list item of the message it answers.
		under := fmt.Sprintf(`//li[*[@data-message-id=%q]]//*[@data-message-id][contains(., %q)]`, answer, body)
		if n := len(run(tb, "the reply under "+answer, chromedp.QueryNodeIDs(under))); n != 1 {
			t.Errorf("the reply does not stand under %s", answer)
		}
	})
}
