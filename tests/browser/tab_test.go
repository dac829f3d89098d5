package browser

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	cdplog "github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// stepTimeout bounds every step of a scenario: a page that never shows what the test waits
// for fails the test instead of hanging it.
const stepTimeout = 20 * time.Second

// tab is one page in a browser context of its own (its own cookies: a person of their own),
// bound to the test that uses it. Every error the page's JavaScript throws and every
// message the browser logs as an error (a refused Content-Security-Policy among them) fails
// the test when it ends.
type tab struct {
	t   *testing.T
	ctx context.Context

	mu     sync.Mutex
	errors []string
}

type tabOptions struct {
	noJavaScript bool
	width        int64 // the viewport, CSS pixels; zero means 1280 × 900
	height       int64
	mobile       bool // emulate a phone: touch, and the page's viewport meta tag applies
	// acceptLanguage is the Accept-Language header the browser sends; "" leaves Chromium's.
	acceptLanguage string
}

func newTab(t *testing.T, browser context.Context, opts tabOptions) *tab {
	t.Helper()
	ctx, cancel := chromedp.NewContext(browser, chromedp.WithNewBrowserContext())
	tb := &tab{t: t, ctx: ctx}
	t.Cleanup(func() {
		cancel()
		tb.mu.Lock()
		defer tb.mu.Unlock()
		for _, e := range tb.errors {
			t.Errorf("the page reported: %s", e)
		}
	})
	// The first run opens the tab, and binds it to the context it is given: tb.ctx itself,
	// never a step's context with a deadline, which would close the tab when the step ends.
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("opening a tab: %v", err)
	}
	if opts.width == 0 {
		opts.width, opts.height = 1280, 900
	}
	var mobile []chromedp.EmulateViewportOption
	if opts.mobile {
		mobile = append(mobile, chromedp.EmulateMobile, chromedp.EmulateTouch)
	}
	tb.do(chromedp.EmulateViewport(opts.width, opts.height, mobile...))
	tb.collectPageErrors()
	if opts.acceptLanguage != "" {
		tb.call(func(ctx context.Context) error {
			_, err := chromedp.Call(ctx, network.SetExtraHTTPHeaders,
				network.SetExtraHTTPHeadersParams{Headers: network.Headers{"Accept-Language": opts.acceptLanguage}})
			return err
		})
	}
	if opts.noJavaScript {
		tb.call(func(ctx context.Context) error {
			_, err := chromedp.Call(ctx, emulation.SetScriptExecutionDisabled, emulation.SetScriptExecutionDisabledParams{Value: true})
			return err
		})
	}
	return tb
}

// collectPageErrors records uncaught exceptions and the browser's error log entries (where
// Chromium reports what a Content-Security-Policy refused).
func (tb *tab) collectPageErrors() {
	tb.call(func(ctx context.Context) error {
		_, err := chromedp.Call(ctx, cdplog.Enable, cdp.Empty{})
		return err
	})
	exceptions := chromedp.Events(tb.ctx, runtime.ExceptionThrown)
	logged := chromedp.Events(tb.ctx, cdplog.EntryAdded)
	go func() {
		for ev, err := range exceptions {
			if err != nil {
				return
			}
			tb.report("uncaught exception: %s", exceptionText(ev.ExceptionDetails))
		}
	}()
	go func() {
		for ev, err := range logged {
			if err != nil {
				return
			}
			// A refusal is an answer of status 4xx that the page shows beside its control, and
			// Chromium logs every such answer as a network error; the scenarios check the
			// statuses they expect themselves.
			if ev.Entry.Level == cdplog.EntryLevelError && ev.Entry.Source != cdplog.EntrySourceNetwork {
				tb.report("%s: %s (%s)", ev.Entry.Source, ev.Entry.Text, ev.Entry.URL)
			}
		}
	}()
}

func exceptionText(d *runtime.ExceptionDetails) string {
	if d.Exception != nil && d.Exception.Description != "" {
		return d.Exception.Description
	}
	return d.Text
}

func (tb *tab) report(format string, args ...any) {
	tb.mu.Lock()
	defer tb.mu.Unlock()
	tb.errors = append(tb.errors, fmt.Sprintf(format, args...))
}

// call runs f with a deadline of one step, and fails the test if it fails.
func (tb *tab) call(f func(ctx context.Context) error) {
	tb.t.Helper()
	ctx, cancel := context.WithTimeout(tb.ctx, stepTimeout)
	defer cancel()
	if err := f(ctx); err != nil {
		tb.t.Fatal(err)
	}
}

// do runs the steps in order and fails the test at the first that fails.
func (tb *tab) do(steps ...chromedp.Action[chromedp.Void]) {
	tb.t.Helper()
	tb.call(func(ctx context.Context) error { return chromedp.Do(ctx, steps...) })
}

// run runs one action and returns its value, failing the test if it fails.
func run[T any](tb *tab, what string, a chromedp.Action[T]) T {
	tb.t.Helper()
	var v T
	tb.call(func(ctx context.Context) error {
		var err error
		if v, err = chromedp.Run(ctx, a); err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
		return nil
	})
	return v
}

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

// cookies are the cookies of the page the tab shows.
func (tb *tab) cookies() []*network.Cookie {
	tb.t.Helper()
	var cookies []*network.Cookie
	tb.call(func(ctx context.Context) error {
		res, err := chromedp.Call(ctx, network.GetCookies, network.GetCookiesParams{})
		cookies = res.Cookies
		return err
	})
	return cookies
}

// setCookies gives the tab's browser context copies of cookies.
func (tb *tab) setCookies(cookies []*network.Cookie) {
	tb.t.Helper()
	params := make([]*network.CookieParam, len(cookies))
	for i, c := range cookies {
		params[i] = &network.CookieParam{Name: c.Name, Value: c.Value, Domain: c.Domain, Path: c.Path,
			Secure: c.Secure, HTTPOnly: c.HTTPOnly, SameSite: c.SameSite}
	}
	tb.call(func(ctx context.Context) error {
		_, err := chromedp.Call(ctx, network.SetCookies, network.SetCookiesParams{Cookies: params})
		return err
	})
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
