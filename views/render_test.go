package views

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"
	"github.com/a-h/templ"
)

func render(t *testing.T, ctx context.Context, c templ.Component) *goquery.Document {
	t.Helper()
	var b bytes.Buffer
	if err := c.Render(ctx, &b); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(b.String(), "<!doctype html>") {
		t.Errorf("the page does not start with a doctype: %.40q", b.String())
	}
	doc, err := goquery.NewDocumentFromReader(&b)
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

func TestLayout(t *testing.T) {
	const title = `Threads <script>alert("x")</script>`
	page := templ.Raw(`<p data-test="child">the page</p>`)
	doc := render(t, templ.WithChildren(context.Background(), page), Layout(title))

	if got := doc.Find("head title").Text(); got != title+" · Parley" {
		t.Errorf("title = %q", got)
	}
	if n := doc.Find("script").Length(); n != 1 {
		t.Errorf("%d script elements, want htmx alone: is the title escaped?", n)
	}
	if doc.Find(`link[rel="stylesheet"][href="/static/css/parley.css"]`).Length() != 1 {
		t.Error("no stylesheet link to /static/css/parley.css")
	}
	if doc.Find(`script[src="/static/vendor/htmx.min.js"]`).Length() != 1 {
		t.Error("no script /static/vendor/htmx.min.js")
	}
	if doc.Find(`main [data-test="child"]`).Text() != "the page" {
		t.Error("the children are not rendered inside main")
	}
	if doc.Find(`html[lang="en"] meta[charset="utf-8"]`).Length() != 1 {
		t.Error("no html lang or charset")
	}
}

func TestSetupPending(t *testing.T) {
	doc := render(t, context.Background(), SetupPending())
	section := doc.Find(`main [data-page="setup-pending"]`)
	if section.Length() != 1 {
		t.Fatal(`no [data-page="setup-pending"] in main`)
	}
	if got := section.Find("h1").Text(); got != "Parley setup" {
		t.Errorf("heading = %q", got)
	}
	if got := section.Find("code").Text(); got != "parley user add --name NAME" {
		t.Errorf("the command shown is %q", got)
	}
	if !strings.Contains(section.Text(), "comes with the web interface") {
		t.Errorf("the page does not say that setup comes with the web interface: %q", section.Text())
	}
	if got := doc.Find("title").Text(); got != "Setup · Parley" {
		t.Errorf("title = %q", got)
	}
}
