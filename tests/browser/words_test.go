package browser

import (
	"testing"

	"github.com/chromedp/chromedp"
)

// wordPages are the pages whose narrow columns and forms the word check reads.
var wordPages = []string{"/", "/moderation", "/tokens", "/rooms", "/health", "/identities",
	"/identities/ainotes:bob", "/threads/new", "/account"}

// testUnbrokenWords: on a phone and on a wide screen, in English and German, no word breaks
// inside itself to fit a narrow column or form — "rea|d" and "lo|ck" on /tokens, words of the
// rooms' table. A word is what stands between spaces and hyphens; one too long for any line (an address,
// the 124-letter word of the narrow-screen scenario) may break, and is not read: the check
// reads words of at most 20 characters, measuring each with a range's client rectangles (a
// word broken over two lines has two).
func testUnbrokenWords(t *testing.T, f *forum) {
	thread, _ := f.proposal(t, "Which words break on a phone?")
	pages := append(wordPages, "/threads/"+thread)
	for _, v := range viewports {
		for _, lang := range []string{"en", "de"} {
			tb := f.signIn(t, tabOptions{width: v.width, height: v.height, mobile: v.mobile, acceptLanguage: lang})
			for _, path := range pages {
				tb.open(f.base + path)
				if broken := brokenWords(tb); len(broken) > 0 {
					t.Errorf("%s (%s, %s): words break inside themselves: %q", path, lang, v.name, broken)
				}
			}
		}
	}
}

// brokenWords are the words of at most 20 characters on the page that stand on more than one
// line, each with the element it is in.
func brokenWords(tb *tab) []string {
	tb.t.Helper()
	return run(tb, "the words broken over lines", chromedp.Evaluate[[]string](`(() => {
		const broken = [];
		const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
		const range = document.createRange();
		for (let n = walker.nextNode(); n; n = walker.nextNode()) {
			const el = n.parentElement;
			if (!el || el.closest("script, style, svg, option, textarea, .visually-hidden")) continue;
			const word = /[^\s\-\u2010-\u2014]+/g; // a hyphen is where a word may end
			let m;
			while ((m = word.exec(n.data))) {
				if (m[0].length < 2 || m[0].length > 20) continue;
				range.setStart(n, m.index);
				range.setEnd(n, m.index + m[0].length);
				const lines = new Set([...range.getClientRects()].filter(r => r.width > 0).map(r => Math.round(r.top)));
				if (lines.size > 1) broken.push(m[0] + " in " + el.tagName.toLowerCase() + (el.className ? "." + el.className : ""));
			}
		}
		return broken;
	})()`))
}
