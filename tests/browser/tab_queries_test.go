package browser

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/chromedp/chromedp"
)

// open loads a page and waits for its body.
func (tb *tab) open(url string) {
	tb.t.Helper()
	tb.do(chromedp.Navigate(url), chromedp.WaitReady(chromedp.CSS("body")))
}

// location is the address the tab shows.
func (tb *tab) location() string {
	tb.t.Helper()
	return run(tb, "location", chromedp.Location())
}

// text is the visible text of the first element css selects, once it is there.
func (tb *tab) text(css string) string {
	tb.t.Helper()
	return strings.TrimSpace(run(tb, "text of "+css, chromedp.Text(chromedp.CSS(css))))
}

// attr is an attribute of the first element css selects, once it is there.
func (tb *tab) attr(css, name string) string {
	tb.t.Helper()
	res := run(tb, "attribute "+name+" of "+css, chromedp.AttributeValue(chromedp.CSS(css), name))
	return res.Value
}

// count is how many elements css selects now, without waiting.
func (tb *tab) count(css string) int {
	tb.t.Helper()
	ids := run(tb, "nodes "+css, chromedp.QueryNodeIDs(chromedp.CSSAll(css), chromedp.AtLeast(0)))
	return len(ids)
}

// status loads url and returns the HTTP status of the answer.
func (tb *tab) status(url string) int64 {
	tb.t.Helper()
	resp := run(tb, "loading "+url, chromedp.NavigateResponse(url))
	return resp.Status
}

// value is the current value of the first form field css selects.
func (tb *tab) value(css string) string {
	tb.t.Helper()
	return run(tb, "value of "+css, chromedp.Value(chromedp.CSS(css)))
}

// watchLoads is called before a control is used, and its result after: with JavaScript the
// control must change the page in place (htmx), without JavaScript it must post a form and
// load the page it redirects to. With JavaScript a mark left in the window tells the two
// apart, which only a new document clears; without, the tab's history, which a form post
// and its redirect lengthen and a swap in place does not.
func (tb *tab) watchLoads(what string, javaScript bool) (check func()) {
	tb.t.Helper()
	if javaScript {
		tb.do(chromedp.Evaluate[chromedp.Void](`window.parleyTestDocument = true`))
		return func() {
			tb.t.Helper()
			if !run(tb, "the document's mark", chromedp.Evaluate[bool](`window.parleyTestDocument === true`)) {
				tb.t.Errorf("%s loaded the page again; with JavaScript it should change it in place", what)
			}
		}
	}
	before := tb.historyLength()
	return func() {
		tb.t.Helper()
		if tb.historyLength() <= before {
			tb.t.Errorf("%s loaded no new page; without JavaScript it should be a form post", what)
		}
	}
}

func (tb *tab) historyLength() int {
	tb.t.Helper()
	return len(run(tb, "the history", chromedp.NavigationEntries()).Entries)
}

// attrs is an attribute of every element css selects now, in document order.
func (tb *tab) attrs(css, name string) []string {
	tb.t.Helper()
	all := run(tb, "attributes "+name+" of "+css, chromedp.AttributesAll(chromedp.CSSAll(css), chromedp.AtLeast(0)))
	var values []string
	for _, a := range all {
		values = append(values, a[name])
	}
	return values
}

// follow runs steps that load a new page (a link, a form sent) and waits until it has
// loaded; it returns the page's HTTP status.
func (tb *tab) follow(steps ...chromedp.Action[chromedp.Void]) int64 {
	tb.t.Helper()
	var status int64
	tb.call(func(ctx context.Context) error {
		resp, err := chromedp.RunResponse(ctx, steps...)
		if err == nil {
			status = resp.Status
		}
		return err
	})
	return status
}

// pageWidths are how wide the page is, how wide its viewport (on a phone the viewport grows
// with a page too wide for the screen), and the widest element's tag and class, to say what
// pushed it wider.
type pageWidths struct {
	scroll, viewport int
	widest           string
}

func (tb *tab) widths() pageWidths {
	tb.t.Helper()
	w := run(tb, "the page's widths", chromedp.Evaluate[struct {
		Scroll, Viewport int
		Widest           string
	}](`(() => {
		let widest = "", right = 0;
		for (const el of document.body.querySelectorAll("*")) {
			const r = Math.max(el.getBoundingClientRect().right, el.getBoundingClientRect().left + el.scrollWidth);
			if (r > right) { right = r; widest = el.tagName.toLowerCase() + "." + el.className + " (" + Math.round(r) + " px)"; }
		}
		return {Scroll: document.documentElement.scrollWidth, Viewport: window.innerWidth, Widest: widest};
	})()`))
	return pageWidths{scroll: w.Scroll, viewport: w.Viewport, widest: w.Widest}
}

// rect is an element's box on the page, CSS pixels.
type rect struct{ Top, Left, Right, Bottom float64 }

// box is the box of the first element css selects; the element must be there.
func (tb *tab) box(css string) rect {
	tb.t.Helper()
	tb.do(chromedp.WaitReady(chromedp.CSS(css)))
	quoted, _ := json.Marshal(css)
	return run(tb, "the box of "+css, chromedp.Evaluate[rect](`(() => {
		const r = document.querySelector(`+string(quoted)+`).getBoundingClientRect();
		return {Top: r.top + scrollY, Left: r.left, Right: r.right, Bottom: r.bottom + scrollY};
	})()`))
}
