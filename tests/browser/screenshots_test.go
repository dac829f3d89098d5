package browser

import (
	"bytes"
	"fmt"
	"image/png"
	"os"
	"path/filepath"
	"testing"

	"github.com/chromedp/chromedp"
)

// screenshotDir is where the tests leave their screenshots, ignored by git. Current ones
// are copied into docs/screenshots by hand, after a look at them.
const screenshotDir = "screenshots"

// viewport is a screen the screenshots are taken on.
type viewport struct {
	name          string
	width, height int64
	mobile        bool
}

var viewports = []viewport{
	{name: "wide", width: 1280, height: 900},
	{name: "narrow", width: 390, height: 844, mobile: true}, // a phone
}

// screenshot saves the whole page the tab shows as screenshots/<name>.png, as Chromium drew
// it, and fails when the page is wider than the tab's viewport (something scrolls sideways).
// Chromium's PNG is written unchanged: the 256-colour copies kept in docs/screenshots are
// made from these by `make screenshots` (tests/browser/palette). Under the race detector
// that rewrite took 4–6 s a picture, a third of these tests' time.
func (tb *tab) screenshot(name string) {
	tb.t.Helper()
	raw := run(tb, "screenshot "+name, chromedp.FullScreenshot(100))
	cfg, err := png.DecodeConfig(bytes.NewReader(raw))
	if err != nil {
		tb.t.Fatalf("screenshot %s: %v", name, err)
	}
	if int64(cfg.Width) != tb.width {
		tb.t.Errorf("screenshot %s: the page is %d px wide in a viewport of %d px", name, cfg.Width, tb.width)
	}
	if err := os.MkdirAll(screenshotDir, 0o755); err != nil {
		tb.t.Fatal(err)
	}
	path := filepath.Join(screenshotDir, name+".png")
	if err := os.WriteFile(path, raw, 0o644); err != nil {
		tb.t.Fatal(err)
	}
}

// screenshotPages takes every main page in both languages on each viewport: the pages as the
// administrator sees them, and the login page as a visitor does.
func (f *forum) screenshotPages(t *testing.T, pages []mainPage) {
	for _, v := range viewports {
		for _, lang := range []string{"en", "de"} {
			opts := tabOptions{width: v.width, height: v.height, mobile: v.mobile, acceptLanguage: lang}
			admin, visitor := f.signIn(t, opts), newTab(t, f.browser, opts)
			for _, p := range pages {
				tb := admin
				if !p.signedIn {
					tb = visitor
				}
				tb.open(f.base + p.path)
				tb.screenshot(fmt.Sprintf("%s-%s-%s", p.name, lang, v.name))
			}
		}
	}
}
