package browser

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/chromedp/chromedp"
)

// axeSource is axe-core as npm ci installed it from package-lock.json (make assets).
var axeSource = sync.OnceValues(func() (string, error) {
	path := filepath.Join("..", "..", "node_modules", "axe-core", "axe.min.js")
	raw, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("axe-core is not installed (run make assets, or npm ci): %w", err)
	}
	return string(raw), nil
})

// axeViolation is the part of an axe-core result the report needs.
type axeViolation struct {
	ID     string `json:"id"`
	Impact string `json:"impact"`
	Help   string `json:"help"`
	Nodes  []struct {
		Target []any  `json:"target"`
		HTML   string `json:"html"`
	} `json:"nodes"`
}

// checkAccessibility injects axe-core into the page the tab shows and fails the test for
// every violation of impact serious or critical.
func checkAccessibility(t *testing.T, tb *tab, page string) {
	t.Helper()
	src, err := axeSource()
	if err != nil {
		t.Fatal(err)
	}
	// The page's Content-Security-Policy allows no inline script; the DevTools protocol's
	// evaluation is not page script, so axe runs under the policy the page really has.
	tb.do(chromedp.Evaluate[chromedp.Void](src))
	violations := run(tb, "axe-core on "+page, chromedp.Evaluate[[]axeViolation](
		`axe.run(document, {resultTypes: ["violations"]}).then(r => r.violations)`, chromedp.EvalAwaitPromise))
	for _, v := range violations {
		if v.Impact != "serious" && v.Impact != "critical" {
			continue
		}
		var where []string
		for _, n := range v.Nodes {
			where = append(where, fmt.Sprintf("%v %s", n.Target, n.HTML))
		}
		t.Errorf("axe-core on %s: %s (%s): %s\n\t%s", page, v.ID, v.Impact, v.Help, strings.Join(where, "\n\t"))
	}
}
