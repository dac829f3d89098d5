package web_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/parleyforum/parley/storage"
	"github.com/parleyforum/parley/storage/storagetest"
	"github.com/parleyforum/parley/web"
)

// The security matrix of the pages' POST routes: every route the router has, each with a row.
// A post with a wrong CSRF token, with none, without a session, or (where the route is for
// administrators) by a human who is not one, is refused and changes nothing in the database;
// then the right caller's post changes something. A new POST route without a row fails.

// matrixTables are what a page's post may change; a refused post leaves each as it was.
var matrixTables = []string{"users", "sessions", "tokens", "rooms", "threads", "messages", "events", "claims", "claim_stances"}

// fingerprint is the content of matrixTables.
func fingerprint(t *testing.T, db *storage.DB) string {
	t.Helper()
	var b strings.Builder
	for _, table := range matrixTables {
		var rows []map[string]any
		if err := db.NewSelect().Table(table).Order("id").Scan(context.Background(), &rows); err != nil {
			t.Fatalf("reading %s: %v", table, err)
		}
		fmt.Fprintf(&b, "%s %v\n", table, rows)
	}
	return b.String()
}

// The callers of a route.
const (
	byAnyone = "anyone"
	byMember = "member"
	byAdmin  = "admin"
)

// matrixCase is what one row posts, made by its setup on the forum.
type matrixCase struct {
	caller *browser // the right caller; it has read a page, so its CSRF token is known
	target string
	form   url.Values
}

type matrixRow struct {
	route string // the router's path
	who   string
	setup func(t *testing.T, m *matrixSite) matrixCase
}

// matrixSite is the forum the rows run on: ada an administrator, bea a member, and a room
// "elsewhere" beside general.
type matrixSite struct {
	f *forum
	n int
}

func (m *matrixSite) fresh(t *testing.T, name string) *browser {
	b := m.f.signedIn(t, name)
	b.get("/")
	return b
}

func (m *matrixSite) unique(prefix string) string {
	m.n++
	return prefix + strconv.Itoa(m.n)
}

func TestPagePostMatrix(t *testing.T) {
	rows := []matrixRow{
		{"/setup", byAnyone, nil}, // its own forum, below: it exists only while no account does
		{"/login", byAnyone, func(t *testing.T, m *matrixSite) matrixCase {
			b := m.f.browser(t)
			b.get("/login")
			return matrixCase{b, "/login", url.Values{"name": {"bea"}, "password": {thePassword}}}
		}},
		{"/logout", byAnyone, func(t *testing.T, m *matrixSite) matrixCase {
			return matrixCase{m.fresh(t, "bea"), "/logout", url.Values{}}
		}},
		{"/account/password", byMember, func(t *testing.T, m *matrixSite) matrixCase {
			return matrixCase{m.fresh(t, "bea"), "/account/password",
				url.Values{"current": {thePassword}, "password": {thePassword}, "password2": {thePassword}}}
		}},
		{"/account/sessions/:id/end", byMember, func(t *testing.T, m *matrixSite) matrixCase {
			b := m.fresh(t, "bea")
			m.fresh(t, "bea")
			u, _ := m.f.db.UserByName(context.Background(), "bea")
			list, _ := m.f.db.Sessions(context.Background(), u.ID)
			return matrixCase{b, "/account/sessions/" + strconv.FormatInt(list[0].ID, 10) + "/end", url.Values{}}
		}},
		{"/account/signout-everywhere", byMember, func(t *testing.T, m *matrixSite) matrixCase {
			return matrixCase{m.fresh(t, "bea"), "/account/signout-everywhere", url.Values{}}
		}},
		{"/users/:name/signout", byAdmin, func(t *testing.T, m *matrixSite) matrixCase {
			m.fresh(t, "bea")
			return matrixCase{m.fresh(t, "ada"), "/users/bea/signout", url.Values{}}
		}},
		{"/threads", byMember, func(t *testing.T, m *matrixSite) matrixCase {
			return matrixCase{m.fresh(t, "bea"), "/threads", url.Values{"title": {m.unique("Opened on a page ")}, "room": {"elsewhere"}}}
		}},
		{"/threads/:id/confirm", byMember, func(t *testing.T, m *matrixSite) matrixCase {
			th := m.f.proposed(m.unique("Proposed "))
			return matrixCase{m.fresh(t, "bea"), "/threads/" + th + "/confirm", url.Values{}}
		}},
		{"/threads/:id/mark", byMember, func(t *testing.T, m *matrixSite) matrixCase {
			th, _ := m.f.ask(m.f.alice, m.unique("To mark "))
			return matrixCase{m.fresh(t, "bea"), "/threads/" + th + "/mark", url.Values{"state": {"decided"}}}
		}},
		{"/threads/:id/messages", byMember, func(t *testing.T, m *matrixSite) matrixCase {
			th, _ := m.f.ask(m.f.alice, m.unique("To reply to "))
			return matrixCase{m.fresh(t, "bea"), "/threads/" + th + "/messages", url.Values{"kind": {"note"}, "body": {"a note"}}}
		}},
		{"/threads/:id/messages/:msg/hide", byMember, func(t *testing.T, m *matrixSite) matrixCase {
			th, msg := m.f.ask(m.f.alice, m.unique("To hide "))
			return matrixCase{m.fresh(t, "bea"), "/threads/" + th + "/messages/" + msg + "/hide", url.Values{"reason": {"spam"}}}
		}},
		{"/threads/:id/messages/:msg/unhide", byMember, func(t *testing.T, m *matrixSite) matrixCase {
			th, msg := m.f.ask(m.f.alice, m.unique("To unhide "))
			m.f.must(m.f.post("/v1/messages/"+msg+"/hide", m.f.human, `{"reason":"spam"}`), http.StatusOK)
			return matrixCase{m.fresh(t, "bea"), "/threads/" + th + "/messages/" + msg + "/unhide", url.Values{}}
		}},
		{"/claims/:id/verify", byMember, func(t *testing.T, m *matrixSite) matrixCase {
			th, ask := m.f.ask(m.f.alice, m.unique("To verify "))
			claim := m.f.assert(m.f.alice, th, ask, m.unique("port "))
			m.f.attest(m.f.bob, claim)
			return matrixCase{m.fresh(t, "bea"), "/claims/" + claim + "/verify", url.Values{}}
		}},
		{"/claims/:id/mark", byMember, func(t *testing.T, m *matrixSite) matrixCase {
			th, ask := m.f.ask(m.f.alice, m.unique("To re-mark "))
			claim := m.f.assert(m.f.alice, th, ask, m.unique("port "))
			return matrixCase{m.fresh(t, "bea"), "/claims/" + claim + "/mark", url.Values{"state": {"refuted"}}}
		}},
		{"/claims/:id/confirm", byMember, func(t *testing.T, m *matrixSite) matrixCase {
			th, ask := m.f.ask(m.f.alice, m.unique("To confirm a claim of "))
			claim := m.f.assert(m.f.alice, th, ask, m.unique("port "))
			m.f.attest(m.f.bob, claim)
			return matrixCase{m.fresh(t, "bea"), "/claims/" + claim + "/confirm", url.Values{}}
		}},
		{"/moderation/confirm", byMember, func(t *testing.T, m *matrixSite) matrixCase {
			th := m.f.proposed(m.unique("Proposed for the queue "))
			return matrixCase{m.fresh(t, "bea"), "/moderation/confirm", url.Values{"item": {th}}}
		}},
		{"/rooms", byAdmin, func(t *testing.T, m *matrixSite) matrixCase {
			return matrixCase{m.fresh(t, "ada"), "/rooms", url.Values{"name": {m.unique("room")}, "title": {"A room"}}}
		}},
		{"/rooms/move", byMember, func(t *testing.T, m *matrixSite) matrixCase {
			th, _ := m.f.ask(m.f.alice, m.unique("To move "))
			return matrixCase{m.fresh(t, "bea"), "/rooms/move", url.Values{"thread": {th}, "room": {"elsewhere"}}}
		}},
		{"/rooms/:name", byAdmin, func(t *testing.T, m *matrixSite) matrixCase {
			return matrixCase{m.fresh(t, "ada"), "/rooms/elsewhere", url.Values{"title": {m.unique("Renamed ")}, "description": {""}}}
		}},
		{"/threads/:id/move", byMember, func(t *testing.T, m *matrixSite) matrixCase {
			th, _ := m.f.ask(m.f.alice, m.unique("To move "))
			return matrixCase{m.fresh(t, "bea"), "/threads/" + th + "/move", url.Values{"room": {"elsewhere"}}}
		}},
		{"/tokens", byAdmin, func(t *testing.T, m *matrixSite) matrixCase {
			return matrixCase{m.fresh(t, "ada"), "/tokens", url.Values{"handle": {m.unique("agent")}, "rights": {"read"}}}
		}},
		{"/tokens/:id/revoke", byAdmin, func(t *testing.T, m *matrixSite) matrixCase {
			m.f.token("ainotes:"+m.unique("revoked"), false, "read", nil)
			tokens, _ := m.f.db.Tokens(context.Background())
			var last int64
			for _, tok := range tokens {
				last = max(last, tok.ID)
			}
			return matrixCase{m.fresh(t, "ada"), "/tokens/" + strconv.FormatInt(last, 10) + "/revoke", url.Values{"confirm": {"yes"}}}
		}},
	}

	t.Run("routes", func(t *testing.T) {
		storagetest.Each(t, func(t *testing.T, db *storage.DB) {
			f := newSite(t, db, web.Options{})
			f.account("ada", true)
			f.account("bea", false)
			m := &matrixSite{f: f}
			m.fresh(t, "ada").post("/rooms", url.Values{"name": {"elsewhere"}, "title": {"Elsewhere"}}).redirectsTo(t, "/rooms")

			// Every POST route of the pages has its row, and every row its route. /v1, /mcp and
			// the manifest's well-known address are the API's, with a matrix of their own
			// (tests/security).
			want := map[string]bool{}
			for _, r := range f.app.GetRoutes(true) {
				api := strings.HasPrefix(r.Path, "/v1") || strings.HasPrefix(r.Path, "/mcp") || strings.HasPrefix(r.Path, "/.well-known/")
				if r.Method == http.MethodPost && !api {
					want[r.Path] = true
				}
			}
			have := map[string]bool{}
			for _, row := range rows {
				have[row.route] = true
				if !want[row.route] {
					t.Errorf("the matrix has a row for POST %s, which the router does not have", row.route)
				}
			}
			var missing []string
			for route := range want {
				if !have[route] {
					missing = append(missing, route)
				}
			}
			sort.Strings(missing)
			for _, route := range missing {
				t.Errorf("POST %s has no row in the matrix", route)
			}

			for _, row := range rows {
				if row.setup == nil {
					continue
				}
				t.Run(strings.ReplaceAll(row.route, "/", "_"), func(t *testing.T) {
					c := row.setup(t, m)
					matrixRefusals(t, m, row, c)
					before := fingerprint(t, db)
					if res := c.caller.post(c.target, clone(c.form)); res.status >= 400 {
						t.Fatalf("the right caller's POST %s: %d\n%s", c.target, res.status, res.body)
					}
					if fingerprint(t, db) == before {
						t.Errorf("the right caller's POST %s changed nothing", c.target)
					}
				})
			}
		})
	})

	// /setup on a forum without an account, as it is only then.
	t.Run("setup", func(t *testing.T) {
		storagetest.Each(t, func(t *testing.T, db *storage.DB) {
			if err := db.SetSetting(context.Background(), storage.SettingSetupCode, "the-code"); err != nil {
				t.Fatal(err)
			}
			m := &matrixSite{f: newSite(t, db, web.Options{})}
			b := m.f.browser(t)
			b.get("/setup?code=the-code").must(t, http.StatusOK)
			c := matrixCase{b, "/setup", url.Values{"code": {"the-code"}, "name": {"ada"}, "password": {thePassword}, "password2": {thePassword}}}
			matrixRefusals(t, m, matrixRow{route: "/setup", who: byAnyone}, c)
			b.post(c.target, clone(c.form)).redirectsTo(t, "/")
			if n, _ := db.CountUsers(context.Background()); n != 1 {
				t.Errorf("the right setup made %d accounts, want 1", n)
			}
		})
	})
}

// matrixRefusals posts c's form as each wrong caller and insists that each is refused and
// that nothing changed.
func matrixRefusals(t *testing.T, m *matrixSite, row matrixRow, c matrixCase) {
	t.Helper()
	db := m.f.db
	type attempt struct {
		name   string
		b      *browser
		form   url.Values
		refuse func(p *page) bool
	}
	forbidden := func(p *page) bool { return p.status == http.StatusForbidden }
	toLogin := func(p *page) bool {
		return p.status == http.StatusSeeOther && strings.HasPrefix(p.header.Get("Location"), "/login")
	}
	wrong, none := clone(c.form), clone(c.form)
	wrong.Set("csrf", "not-the-token")
	none["csrf"] = nil // set, so post adds none; empty, so none is sent
	attempts := []attempt{
		{"a wrong CSRF token", c.caller, wrong, forbidden},
		{"no CSRF token", c.caller, none, forbidden},
	}
	if row.who != byAnyone {
		anon := m.f.browser(t)
		anon.get("/login")
		attempts = append(attempts, attempt{"no session", anon, clone(c.form), toLogin})
	}
	if row.who == byAdmin {
		attempts = append(attempts, attempt{"not an administrator", m.fresh(t, "bea"), clone(c.form), forbidden})
	}
	for _, a := range attempts {
		before := fingerprint(t, db)
		if res := a.b.post(c.target, a.form); !a.refuse(res) {
			t.Errorf("POST %s with %s: %d %s, want it refused", c.target, a.name, res.status, res.header.Get("Location"))
		}
		if fingerprint(t, db) != before {
			t.Errorf("POST %s with %s changed the database", c.target, a.name)
		}
	}
}

// clone copies a form, so that each post sends its own.
func clone(v url.Values) url.Values {
	out := url.Values{}
	for k, vs := range v {
		out[k] = append([]string(nil), vs...)
	}
	return out
}
