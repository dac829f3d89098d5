// Package browser drives Parley's pages in a real headless Chromium, the way a person uses
// them: the parley binary serves on SQLite and on Postgres, chromedp clicks through the pages
// by their stable hooks (OPERATOR.md), axe-core checks each main page, and screenshots of the
// main pages land in screenshots/ (ignored by git; current ones are kept in docs/screenshots).
package browser
