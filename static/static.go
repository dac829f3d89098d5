// Package static holds the files Parley serves under /static, embedded in the binary: its
// stylesheet (css/), its icon (favicon.svg) and the browser libraries it vendors (vendor/, copied from the npm
// packages pinned in package.json by `make assets`, and not kept in git).
package static

import (
	"embed"
	"fmt"
	"io/fs"
	"strings"
)

// vendor/README.md is committed so that the embed compiles before `make assets` has run.
//
//go:embed css vendor favicon.svg
var files embed.FS

// FS returns the static files with paths as served below /static: css/parley.css is
// /static/css/parley.css.
func FS() fs.FS { return files }

// vendored lists what `make assets` copies into vendor/.
var vendored = []string{"vendor/htmx.min.js", "vendor/htmx-ext-sse.min.js"}

// Check reports vendored files missing from this build, which happens to a binary built with
// go build before `make assets` ran: its pages would work without htmx, badly.
func Check() error {
	var missing []string
	for _, name := range vendored {
		if _, err := fs.Stat(files, name); err != nil {
			missing = append(missing, "static/"+name)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("built without %s: run make assets (or make build) and build again", strings.Join(missing, ", "))
	}
	return nil
}
