package views

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
	"github.com/a-h/templ"

	"github.com/parleyforum/parley/locale"
	"github.com/parleyforum/parley/protocol"
)

// pageContext is a request's context as the web package builds it, in lang, for viewer.
func pageContext(lang string, viewer *Viewer) context.Context {
	return WithPage(context.Background(), &Page{
		Tr: locale.For(lang), CSRF: "the-token", Viewer: viewer, Path: "/threads/th_1", Now: time.Now(),
	})
}

func render(t *testing.T, ctx context.Context, c templ.Component) *goquery.Document {
	t.Helper()
	var b bytes.Buffer
	if err := c.Render(ctx, &b); err != nil {
		t.Fatal(err)
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
	doc := render(t, templ.WithChildren(pageContext("de", &Viewer{Name: "ada"}), page), Layout(title))

	if got := doc.Find("head title").Text(); got != title+" · Parley" {
		t.Errorf("title = %q", got)
	}
	if n := doc.Find("script").Length(); n != 2 {
		t.Errorf("%d script elements, want htmx and its SSE extension alone: is the title escaped?", n)
	}
	if doc.Find(`script[src="/static/vendor/htmx-ext-sse.min.js"][defer]`).Length() != 1 {
		t.Error("no deferred script /static/vendor/htmx-ext-sse.min.js, which the live pages need")
	}
	if doc.Find(`script:not([src])`).Length() != 0 {
		t.Error("an inline script: the CSP forbids it")
	}
	if doc.Find(`link[rel="stylesheet"][href="/static/css/parley.css"]`).Length() != 1 {
		t.Error("no stylesheet link to /static/css/parley.css")
	}
	if doc.Find(`script[src="/static/vendor/htmx.min.js"]`).Length() != 1 {
		t.Error("no script /static/vendor/htmx.min.js")
	}
	if doc.Find(`main#main [data-test="child"]`).Text() != "the page" {
		t.Error("the children are not rendered inside main")
	}
	if doc.Find(`html[lang="de"] meta[charset="utf-8"]`).Length() != 1 {
		t.Error("no html lang=de or charset")
	}
	if cfg, _ := doc.Find(`meta[name="htmx-config"]`).Attr("content"); !strings.Contains(cfg, `"allowEval":false`) ||
		!strings.Contains(cfg, `"includeIndicatorStyles":false`) {
		t.Errorf("htmx-config = %q: htmx would need eval or inline styles", cfg)
	}
	if doc.Find(`form[action="/logout"][method="post"] input[name="csrf"][value="the-token"]`).Length() != 1 {
		t.Error("no logout form with the CSRF token for a signed-in human")
	}
	if got := doc.Find(`a[hreflang="en"]`).AttrOr("href", ""); got != "/threads/th_1?lang=en" {
		t.Errorf("the switch to English links %q", got)
	}
}

func TestStateBadge(t *testing.T) {
	now := time.Now()
	for _, tc := range []struct {
		lang      string
		thread    protocol.ThreadView
		confirmed string
		text      string
	}{
		{"en", protocol.ThreadView{State: "answered"}, "false", "answered proposed, unconfirmed"},
		{"de", protocol.ThreadView{State: "answered"}, "false", "beantwortet vorgeschlagen, unbestätigt"},
		{"en", protocol.ThreadView{State: "closed", StateConfirmedAt: &now}, "true", "closed"},
	} {
		doc := render(t, pageContext(tc.lang, nil), StateBadge(&tc.thread))
		badge := doc.Find("[data-state]")
		if badge.AttrOr("data-state", "") != string(tc.thread.State) || badge.AttrOr("data-confirmed", "") != tc.confirmed {
			t.Errorf("%s badge of %+v: data-state=%q data-confirmed=%q", tc.lang, tc.thread, badge.AttrOr("data-state", ""), badge.AttrOr("data-confirmed", ""))
		}
		if got := strings.Join(strings.Fields(badge.Text()), " "); got != tc.text {
			t.Errorf("%s badge reads %q, want %q", tc.lang, got, tc.text)
		}
	}
}

// A body is text: markup in it is shown, never run; URLs become links that tell search
// engines and the linked page nothing about Parley.
func TestBodyIsText(t *testing.T) {
	body := "line one\n<script>alert(1)</script><img src=x onerror=alert(2)> https://example.org/a"
	doc := render(t, pageContext("en", nil), Body(body))
	if doc.Find("script, img").Length() != 0 {
		t.Fatal("markup in a body became elements")
	}
	if got := doc.Find(".body").Text(); got != body {
		t.Errorf("the body reads %q, want it unchanged %q", got, body)
	}
	a := doc.Find(".body a")
	if a.Length() != 1 || a.AttrOr("href", "") != "https://example.org/a" || a.AttrOr("rel", "") != "nofollow noopener ugc" {
		t.Errorf("the URL is not one safe link: %d links, href %q, rel %q", a.Length(), a.AttrOr("href", ""), a.AttrOr("rel", ""))
	}
}

// A lock holder's label reads AI · in English and KI · in German, in the timeline and
// beside its messages.
func TestLockLabel(t *testing.T) {
	now := time.Now()
	title := "t"
	tp := ThreadPage{
		Thread: &protocol.ThreadView{ID: "th_1", Title: &title, State: "answered", StateConfirmedAt: &now, CreatedAt: now, UpdatedAt: now},
		Messages: []*protocol.MessageView{{ID: "msg_1", Kind: "answer", From: protocol.Party{Identity: "ainotes:mod"},
			AuthorKind: "llm", Body: "b", CreatedAt: now}},
		Events: []*protocol.EventView{{ID: "ev_1", Act: "answer", To: "answered", Origin: "llm",
			Actor: protocol.Party{Identity: "ainotes:mod"}, Label: protocol.LockLabelPrefix + "Moderation", Confirmed: true, At: now}},
	}
	for lang, want := range map[string]string{"en": "AI · Moderation", "de": "KI · Moderation"} {
		doc := render(t, pageContext(lang, nil), ThreadPageView(tp))
		if got := doc.Find(`[data-message-id="msg_1"] .lock-label`).Text(); got != want {
			t.Errorf("%s: the message's lock label reads %q, want %q", lang, got, want)
		}
		if !strings.Contains(doc.Find(`#timeline [data-event-id="ev_1"]`).Text(), want) {
			t.Errorf("%s: the timeline does not read %q: %q", lang, want, doc.Find("#timeline").Text())
		}
	}
}
