package web_test

import (
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/PuerkitoBio/goquery"
	"golang.org/x/crypto/argon2"

	"github.com/parleyforum/parley/storage"
	"github.com/parleyforum/parley/web"
	"github.com/parleyforum/parley/web/password"
)

// The pages are tested as a browser uses them: over HTTP, with a cookie jar, following no
// redirect on its own, reading the HTML with goquery by the stable hooks of OPERATOR.md.

// thePassword is every test account's password.
const thePassword = "correct horse battery"

// passwordHash is thePassword's hash as these tests' accounts store it: argon2id at the least
// cost password.Verify accepts (8 KiB, one pass). Verify reads the cost from the hash, so a
// login here costs microseconds, not the half second of Parley's own cost under the race
// detector — which was half the CPU of this package's tests. Accounts made through the pages
// (setup, a changed password) still get Parley's cost, and web/password tests it.
var passwordHash = sync.OnceValue(func() string {
	salt := []byte("parley test salt")
	key := argon2.IDKey([]byte(thePassword), salt, 1, 8, 1, 32)
	b64 := base64.RawStdEncoding
	h := fmt.Sprintf("$argon2id$v=%d$m=8,t=1,p=1$%s$%s", argon2.Version, b64.EncodeToString(salt), b64.EncodeToString(key))
	if ok, err := password.Verify(h, thePassword); !ok || err != nil {
		panic(fmt.Sprintf("the tests' password hash %s does not verify: %v", h, err))
	}
	return h
})

// newSite is a forum (the agents' tokens of newForum) whose pages are read as opts say.
func newSite(t *testing.T, db *storage.DB, opts web.Options) *forum {
	t.Helper()
	opts.DB = db
	return newForumWith(t, opts)
}

// account stores a human account with thePassword.
func (f *forum) account(name string, admin bool) {
	f.t.Helper()
	create := f.db.CreateUser
	if admin {
		create = f.db.CreateAdmin
	}
	if _, err := create(context.Background(), name, passwordHash()); err != nil {
		f.t.Fatal(err)
	}
}

// browser is one reader's browser: its own cookies.
type browser struct {
	t      testing.TB
	f      *forum
	client *http.Client
	csrf   string // the CSRF token of the last page read
}

func (f *forum) browser(t testing.TB) *browser {
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	return &browser{t: t, f: f, client: &http.Client{
		Jar:           jar,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}}
}

// signedIn is a browser in which name has signed in through the login form.
func (f *forum) signedIn(t testing.TB, name string) *browser {
	t.Helper()
	b := f.browser(t)
	b.get("/login")
	res := b.post("/login", url.Values{"name": {name}, "password": {thePassword}})
	if res.status != http.StatusSeeOther {
		t.Fatalf("signing in as %s: %d\n%s", name, res.status, res.body)
	}
	return b
}

// page is an answer of the pages.
type page struct {
	status int
	header http.Header
	body   string
	doc    *goquery.Document
}

// find is the selection of selector in the page.
func (p *page) find(selector string) *goquery.Selection { return p.doc.Find(selector) }

// text is the text of selector, its white space collapsed.
func (p *page) text(selector string) string {
	return strings.Join(strings.Fields(p.doc.Find(selector).Text()), " ")
}

// headers are request headers as pairs: "HX-Request", "true".
func (b *browser) do(method, target string, form url.Values, headers ...string) *page {
	b.t.Helper()
	var body io.Reader = http.NoBody
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequest(method, b.f.base+target, body)
	if err != nil {
		b.t.Fatal(err)
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := b.client.Do(req)
	if err != nil {
		b.t.Fatalf("%s %s: %v", method, target, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		b.t.Fatal(err)
	}
	p := &page{status: resp.StatusCode, header: resp.Header, body: string(raw)}
	if p.doc, err = goquery.NewDocumentFromReader(strings.NewReader(p.body)); err != nil {
		b.t.Fatal(err)
	}
	if token, ok := p.doc.Find(`input[name="csrf"]`).Attr("value"); ok {
		b.csrf = token
	}
	return p
}

func (b *browser) get(target string, headers ...string) *page {
	b.t.Helper()
	return b.do(http.MethodGet, target, nil, headers...)
}

// post sends a form with the CSRF token of the last page read.
func (b *browser) post(target string, form url.Values, headers ...string) *page {
	b.t.Helper()
	if form == nil {
		form = url.Values{}
	}
	if _, set := form["csrf"]; !set {
		form.Set("csrf", b.csrf)
	}
	return b.do(http.MethodPost, target, form, headers...)
}

// htmx are the headers htmx sends with a request.
var htmx = []string{"HX-Request", "true"}

// must insists on status and returns the page.
func (p *page) must(t *testing.T, status int) *page {
	t.Helper()
	if p.status != status {
		t.Fatalf("status %d, want %d:\n%s", p.status, status, p.body)
	}
	return p
}

// redirectsTo insists on 303 See Other to location.
func (p *page) redirectsTo(t *testing.T, location string) {
	t.Helper()
	if p.status != http.StatusSeeOther || p.header.Get("Location") != location {
		t.Fatalf("answer %d to %q, want 303 to %q:\n%s", p.status, p.header.Get("Location"), location, p.body)
	}
}
