package browser

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	cdplog "github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// stepTimeout bounds every step of a scenario: a page that never shows what the test waits
// for fails the test instead of hanging it. It is generous because make test runs the other
// packages' tests beside these, on as few as two cores.
const stepTimeout = 45 * time.Second

// tab is one page in a browser context of its own (its own cookies: a person of their own),
// bound to the test that uses it. Every error the page's JavaScript throws and every
// message the browser logs as an error (a refused Content-Security-Policy among them) fails
// the test when it ends.
type tab struct {
	t     *testing.T
	ctx   context.Context
	width int64 // the viewport's, CSS pixels

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
	tb.width = opts.width
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

// collectPageErrors records uncaught exceptions, console.error calls and the browser's error
// log entries (where Chromium reports what a Content-Security-Policy refused).
func (tb *tab) collectPageErrors() {
	tb.call(func(ctx context.Context) error {
		_, err := chromedp.Call(ctx, cdplog.Enable, cdp.Empty{})
		return err
	})
	exceptions := chromedp.Events(tb.ctx, runtime.ExceptionThrown)
	consoled := chromedp.Events(tb.ctx, runtime.ConsoleAPICalled)
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
		// htmx reports what goes wrong in a request (an answer of 5xx, a missing target) with
		// console.error.
		for ev, err := range consoled {
			if err != nil {
				return
			}
			if ev.Type == runtime.ConsoleAPICalledTypeError {
				tb.report("console.error: %s", consoleText(ev.Args))
			}
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

func consoleText(args []*runtime.RemoteObject) string {
	var parts []string
	for _, a := range args {
		if a.Description != "" {
			parts = append(parts, a.Description)
		} else {
			parts = append(parts, string(a.Value))
		}
	}
	return strings.Join(parts, " ")
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

// clickLive is chromedp.Click for a control inside a part of the page that the live stream
// swaps (the queue's lists, a thread's message tree). A swap that lands between the query and
// the click takes away the node the query found — the browser answers "Could not find node
// with given id" or "Node is detached from document" — and the click then queries the new
// part again, as a person would click the control they now see. Any other error, or the
// step's deadline, ends it.
func clickLive(css string) chromedp.Action[chromedp.Void] {
	return func(ctx context.Context, t *chromedp.Target) (chromedp.Void, error) {
		for {
			_, err := chromedp.Click(chromedp.CSS(css))(ctx, t)
			var browserErr *cdproto.Error
			if !errors.As(err, &browserErr) || !swappedAway(browserErr.Message) {
				return chromedp.Void{}, err
			}
		}
	}
}

func swappedAway(message string) bool {
	return strings.Contains(message, "Could not find node with given id") ||
		strings.Contains(message, "Node is detached from document")
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

// withAndWithoutJavaScript runs a scenario twice, as the subtests javascript=true and
// javascript=false: every control must work both ways.
func withAndWithoutJavaScript(t *testing.T, scenario func(t *testing.T, js bool)) {
	for _, js := range []bool{true, false} {
		t.Run(fmt.Sprintf("javascript=%t", js), func(t *testing.T) { scenario(t, js) })
	}
}
