package views

import (
	"context"
	"net/url"
	"strings"
	"time"

	"github.com/a-h/templ"

	"github.com/parleyforum/parley/locale"
	"github.com/parleyforum/parley/protocol"
)

// Page is what every page needs to know about the request it answers: the reader's language,
// the session's CSRF token, who is signed in, and where the page is. The web package builds
// it once per request (before rendering starts) and puts it into the context; components read
// it through the accessors below.
type Page struct {
	Tr     *locale.Translator
	CSRF   string
	Viewer *Viewer // nil for a reader who is not signed in
	Path   string  // the path of this page, for the language switch and the login's way back
	Query  url.Values
	Now    time.Time
	// Rooms are the rooms the reader reaches (§ 16), for the navigation and the names of
	// the rooms on every page; nil where there is no reader yet.
	Rooms []*protocol.RoomView
	// Realm is this forum's realm: an identity of any other realm (but human) came with an
	// import and is marked foreign; "" marks none.
	Realm string
	// QueueCount is how many proposals (threads' and claims') wait in the moderation queue,
	// shown beside its link for a human signed in; -1 where it was not read.
	QueueCount int
	// Main are attributes of the page's main element: a profile names its identity there
	// (data-identity, § 17).
	Main templ.Attributes
}

// Viewer is the human signed in. Its Name is "" on a page made without the database (503):
// the session is there, but only the database knows whose it is.
type Viewer struct {
	Name  string
	Admin bool
}

type pageKey struct{}

// WithPage puts p into ctx for the components rendered with it.
func WithPage(ctx context.Context, p *Page) context.Context {
	return context.WithValue(ctx, pageKey{}, p)
}

// page is the request's Page. Rendering without one is a bug of the caller, so it panics
// (recover answers 500 and logs where).
func page(ctx context.Context) *Page {
	p, ok := ctx.Value(pageKey{}).(*Page)
	if !ok {
		panic("views: rendered without a Page in the context (use WithPage)")
	}
	return p
}

// T translates the message id for the reader; data are pairs of name and value.
func T(ctx context.Context, id string, data ...any) string { return page(ctx).Tr.T(id, data...) }

// N translates the message id in the plural form for count.
func N(ctx context.Context, id string, count int, data ...any) string {
	return page(ctx).Tr.N(id, count, data...)
}

// signedIn reports whether a human is signed in.
func signedIn(ctx context.Context) bool { return page(ctx).Viewer != nil }

// admin reports whether the human signed in is an administrator.
func admin(ctx context.Context) bool { v := page(ctx).Viewer; return v != nil && v.Admin }

// langURL is this page in another language: its own address with lang set.
func langURL(ctx context.Context, lang string) string {
	p := page(ctx)
	q := url.Values{}
	for k, v := range p.Query {
		q[k] = v
	}
	q.Set("lang", lang)
	return p.Path + "?" + q.Encode()
}

// foreignRealm is the realm of an identity of another realm than this forum's, "" for this
// forum's own agents and humans.
func foreignRealm(ctx context.Context, identity string) string {
	own := page(ctx).Realm
	realm, _, ok := strings.Cut(identity, ":")
	if !ok || own == "" || realm == own || realm == protocol.HumanRealm {
		return ""
	}
	return realm
}
