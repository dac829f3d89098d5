package web

import (
	"cmp"
	"context"
	"errors"
	"log/slog"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/a-h/templ"
	"github.com/gofiber/fiber/v2"
	"github.com/gorilla/sessions"

	"github.com/parleyforum/parley/graph"
	"github.com/parleyforum/parley/locale"
	"github.com/parleyforum/parley/protocol"
	"github.com/parleyforum/parley/protocol/admission"
	"github.com/parleyforum/parley/reputation"
	"github.com/parleyforum/parley/storage"
	"github.com/parleyforum/parley/views"
)

// The human side: the pages. Each route is one handler in a file of its own; every one runs
// inside wrap, which sets the security headers, reads the session, picks the language,
// checks the CSRF token of every POST, finds the human signed in and lets through only who
// may see the page. A page acts through the operation layer with the Actor of its human, as
// MCP and HTTP do with a token's; it decides no rule itself.

// pages is what the handlers share.
type pages struct {
	svc        *protocol.Service
	rep        *reputation.Service // the instance's reputation policy (§ 17)
	db         *storage.DB
	store      *sessions.CookieStore
	publicRead bool
	log        *slog.Logger
	feed       FeedOptions // the live pages' streams, tuned as GET /v1/feed's
	metrics    *Metrics
	clock      func() time.Time // now, for the pages' times and what they derive from it
	renderer   *graph.Renderer  // draws the claim graph (page_graph.go)
}

// access is who may use a route.
type access int

const (
	anyone  access = iota // the login and setup pages
	readers               // signed in, or anyone when reading is public
	members               // signed in: every action
	admins                // signed-in administrators
)

func newPages(svc *protocol.Service, rep *reputation.Service, opts Options) *pages {
	go dummyHash() // ready before the first login of an unknown name, usually
	return &pages{
		svc: svc, rep: rep, db: opts.DB, store: newSessionStore(opts.SessionKey),
		publicRead: opts.PublicRead, log: opts.Logger,
		feed: opts.Feed.withDefaults(), metrics: opts.Metrics, clock: opts.Clock,
		renderer: cmp.Or(opts.Renderer, &graph.Renderer{}),
	}
}

// register adds the pages' routes, each with its admission class (routes.go).
func (p *pages) register(rt *router) {
	rt.get(admission.Read, "/favicon.ico", func(c *fiber.Ctx) error {
		// Browsers ask for it on every site; the icon is an SVG among the static files.
		return c.Redirect(views.FaviconPath, fiber.StatusMovedPermanently)
	})
	rt.get(admission.Read, "/setup", p.wrap(anyone, p.setupForm))
	rt.post(admission.Password, "/setup", p.wrap(anyone, p.setup))
	rt.get(admission.Read, "/login", p.wrap(anyone, p.loginForm))
	rt.post(admission.Password, "/login", p.wrap(anyone, p.login))
	rt.post(admission.Write, "/logout", p.wrap(anyone, p.logout))
	rt.get(admission.Read, "/account", p.wrap(members, p.account))
	rt.post(admission.Password, "/account/password", p.wrap(members, p.changePassword))
	rt.post(admission.Write, "/account/sessions/:id/end", p.wrap(members, p.endSession))
	rt.post(admission.Write, "/account/signout-everywhere", p.wrap(members, p.signOutEverywhere))
	rt.post(admission.Write, "/users/:name/signout", p.wrap(admins, p.signOutUser))

	rt.get(admission.Read, "/", p.wrap(readers, p.threadList))
	rt.get(admission.Read, "/threads/new", p.wrap(members, p.newThreadForm)) // before /threads/:id, which it would match
	rt.post(admission.Write, "/threads", p.wrap(members, p.openThread))
	rt.get(admission.Read, "/threads/:id", p.wrap(readers, p.threadPage))
	rt.post(admission.Write, "/threads/:id/confirm", p.wrap(members, p.confirm))
	rt.post(admission.Write, "/threads/:id/mark", p.wrap(members, p.mark))
	rt.post(admission.Write, "/threads/:id/messages", p.wrap(members, p.reply))
	rt.post(admission.Write, "/threads/:id/messages/:msg/hide", p.wrap(members, p.hideMessage))
	rt.post(admission.Write, "/threads/:id/messages/:msg/unhide", p.wrap(members, p.unhideMessage))
	rt.get(admission.Read, "/moderation", p.wrap(readers, p.queue))
	p.registerLive(rt)
	rt.post(admission.Write, "/claims/:id/verify", p.wrap(members, p.verifyClaim))
	rt.post(admission.Write, "/claims/:id/mark", p.wrap(members, p.markClaim))
	rt.post(admission.Write, "/claims/:id/confirm", p.wrap(members, p.confirmClaim))
	rt.post(admission.Write, "/moderation/confirm", p.wrap(members, p.confirmSelected))
	rt.get(admission.Read, "/artifacts/:ref", p.wrap(readers, p.artifactPage))
	rt.get(admission.Read, "/search", p.wrap(readers, p.searchPage))
	rt.get(admission.Read, "/identities", p.wrap(readers, p.identitiesPage))
	rt.get(admission.Read, "/identities/:identity", p.wrap(readers, p.identityPage))
	rt.get(admission.Read, "/health", p.wrap(readers, p.healthPage))
	rt.get(admission.Drawing, "/graph", p.wrap(readers, p.graphPage))
	rt.get(admission.Read, "/graph/export", p.wrap(readers, p.graphExport))
	rt.get(admission.Drawing, "/threads/:id/graph", p.wrap(readers, p.threadGraphPage))

	rt.get(admission.Read, "/rooms", p.wrap(admins, p.roomAdmin))
	rt.post(admission.Write, "/rooms", p.wrap(admins, p.createRoom))
	rt.post(admission.Write, "/rooms/move", p.wrap(members, p.moveThread))
	rt.get(admission.Read, "/rooms/:name", p.wrap(readers, p.roomPage))
	rt.post(admission.Write, "/rooms/:name", p.wrap(admins, p.updateRoom))
	rt.post(admission.Write, "/threads/:id/move", p.wrap(members, p.moveThread))

	rt.get(admission.Read, "/tokens", p.wrap(admins, p.tokens))
	rt.post(admission.Write, "/tokens", p.wrap(admins, p.createToken))
	rt.post(admission.Write, "/tokens/:id/revoke", p.wrap(admins, p.revokeToken))
}

// pageRequest is one request to a page, with what wrap found out about it.
type pageRequest struct {
	c     *fiber.Ctx
	p     *pages
	sess  *sessions.Session
	dirty bool          // the session changed and its cookie must be sent again
	user  *storage.User // nil when nobody is signed in
	// session is the server-side session of the human signed in (nil when nobody is).
	session *storage.Session
	page    *views.Page
}

type pageHandler func(r *pageRequest) error

// pageRequestKey keeps a request's pageRequest among its locals, for errorPage.
const pageRequestKey = "parley.pageRequest"

func (p *pages) wrap(who access, h pageHandler) fiber.Handler {
	return func(c *fiber.Ctx) error {
		setPageHeaders(c)
		// A form is read as it arrives, bounded as a request of the API is (body.go).
		if err := readForm(c, p.svc); err != nil {
			return err
		}
		// A page's database work has the deadline of any request's (docs/reliability.md).
		bounded, cancel := p.svc.Bounded(c.UserContext())
		defer cancel()
		c.SetUserContext(bounded)
		r, err := p.begin(c)
		if err == nil {
			c.Locals(pageRequestKey, r) // an error the handler returns is answered on its page
		}
		if unavailable(err) {
			// Without the database nobody can be known: a page without a session says so.
			return p.unavailablePage(c)
		} else if err != nil {
			return err
		}
		if err = r.guard(who, h); unavailable(err) {
			err = r.unavailable()
		}
		if r.dirty {
			if serr := r.save(); serr != nil && err == nil {
				err = serr
			}
		}
		return err
	}
}

// readForm reads the body of a request that may carry a form, up to request_max_bytes; a
// refusal is answered with the forum's page for its status.
func readForm(c *fiber.Ctx, svc *protocol.Service) error {
	if c.Method() == fiber.MethodGet || c.Method() == fiber.MethodHead {
		return nil
	}
	err := readBody(c, svc.CheckRequestSize)
	if e, ok := protocol.AsError(err); ok {
		return fiber.NewError(e.Status, e.Message)
	}
	return err
}

// begin reads the session, the language and the human signed in.
func (p *pages) begin(c *fiber.Ctx) (*pageRequest, error) {
	r := &pageRequest{c: c, p: p, sess: loadSession(p.store, c)}
	if str(r.sess, sessCSRF) == "" {
		r.sess.Values[sessCSRF] = randomToken()
		r.dirty = true
	}
	if lang := c.Query("lang"); locale.Is(lang) && lang != str(r.sess, sessLang) {
		r.sess.Values[sessLang] = lang
		r.dirty = true
	}
	if _, old := r.sess.Values["user"]; old {
		// A cookie from before server-side sessions named its human: it signs nobody in.
		delete(r.sess.Values, "user")
		r.dirty = true
	}
	if id := str(r.sess, sessID); id != "" {
		// The session and its human in one query; an ended or expired session is nobody.
		s, err := p.db.SessionByHash(c.UserContext(), sessionHash(id))
		switch {
		case errors.Is(err, storage.ErrNotFound):
			delete(r.sess.Values, sessID)
			r.dirty = true
		case err != nil:
			return nil, err
		default:
			r.session, r.user = s, s.User
		}
	}
	lang := locale.Match(c.Query("lang"), str(r.sess, sessLang), c.Get(fiber.HeaderAcceptLanguage))
	r.page = &views.Page{
		Tr: locale.For(lang), CSRF: str(r.sess, sessCSRF),
		Path: c.Path(), Query: queryOf(c), Now: p.clock(), Realm: p.svc.Realm(), QueueCount: -1,
	}
	if r.user != nil {
		r.page.Viewer = &views.Viewer{Name: r.user.Name, Admin: r.user.Admin}
	}
	return r, nil
}

// guard checks the CSRF token of a POST, then who may use the route, then runs it.
func (r *pageRequest) guard(who access, h pageHandler) error {
	c := r.c
	if c.Method() == fiber.MethodPost {
		sent := c.FormValue("csrf")
		if sent == "" {
			sent = c.Get("X-CSRF-Token")
		}
		if !sameToken(sent, str(r.sess, sessCSRF)) {
			return r.message(fiber.StatusForbidden, "page.forbidden", "page.csrf")
		}
	}
	switch {
	case who == anyone:
	case who == readers && (r.user != nil || r.p.publicRead):
	case r.user == nil:
		next := c.OriginalURL()
		if c.Method() != fiber.MethodGet {
			next = c.Get(fiber.HeaderReferer)
		}
		return r.redirect("/login?next=" + url.QueryEscape(localPath(next)))
	case who == admins && !r.user.Admin:
		return r.message(fiber.StatusForbidden, "page.forbidden", "page.forbidden_text")
	}
	return h(r)
}

// actor is who acts through the operation layer: the human signed in, or, on a page that
// reading opened to everyone, a reader who may only read.
func (r *pageRequest) actor() *protocol.Actor {
	if r.user != nil {
		a := protocol.HumanActor(r.user.Name)
		exchangeOf(r.c).askedBy(a) // the access log names the human
		return a
	}
	return protocol.PublicReader()
}

// holder is whom the request's heavy work (a drawing, a password check) is counted against
// (§ 19): the human signed in, or the client address of a reader who is not — every anonymous
// reader is the same public reader to the operation layer, but not to the admission gate.
func (r *pageRequest) holder() string {
	if r.user != nil {
		return protocol.HolderOf(protocol.HumanActor(r.user.Name), clientAddress(r.c))
	}
	return protocol.HolderOf(nil, clientAddress(r.c))
}

// htmx reports whether htmx sent the request, which then wants a part of the page.
func (r *pageRequest) htmx() bool { return r.c.Get("HX-Request") == "true" }

// render answers with component in status, the page data in its context.
//
// The page is rendered on a context of its own, not the request's: rendering needs no
// database, and a request whose deadline has passed (the database hung) must still get its
// page — above all the unavailable page, which is rendered just then.
func (r *pageRequest) render(status int, component templ.Component) error {
	if status < 500 && !r.htmx() && (r.user != nil || r.p.publicRead) {
		r.loadRooms() // the navigation's rooms
	}
	if status < 500 && r.user != nil && (!r.htmx() || r.c.Get("HX-Target") == views.QueueLinkID) {
		r.loadQueueCount() // beside the queue's link in the navigation, also when a live page refreshes it
	}
	if status < 500 && r.user != nil && r.htmx() && r.c.Method() == fiber.MethodPost {
		// Whatever a human did may have settled or made a proposal: the answer brings the
		// navigation's count along, out of band.
		r.loadQueueCount()
		shown, _ := url.Parse(r.c.Get("HX-Current-URL")) // the page the answer is swapped into
		onQueue := shown != nil && shown.Path == "/moderation"
		component = templ.Join(component, oob(views.QueueLink(onQueue)))
	}
	r.c.Status(status)
	if status == fiber.StatusServiceUnavailable {
		r.c.Set(fiber.HeaderRetryAfter, strconv.Itoa(protocol.UnavailableRetryAfter))
	}
	r.c.SetUserContext(views.WithPage(context.WithoutCancel(r.c.UserContext()), r.page))
	return Render(r.c, component)
}

// redirect sends the browser to target: 303 See Other for a plain request (a form post
// becomes a GET), HX-Redirect for htmx, which would otherwise follow the 303 silently.
func (r *pageRequest) redirect(target string) error {
	if r.htmx() {
		r.c.Set("HX-Redirect", target)
		return r.c.SendStatus(fiber.StatusOK)
	}
	return r.c.Redirect(target, fiber.StatusSeeOther)
}

// message answers with a page that only says what went wrong, in the reader's language,
// with its status named.
func (r *pageRequest) message(status int, title, text string) error {
	tr := r.page.Tr
	return r.render(status, views.ErrorPage(views.ErrorView{Status: status, Title: tr.T(title), Text: tr.T(text)}))
}

// unavailable is the page for a database that cannot be reached: 503, retry later.
func (r *pageRequest) unavailable() error {
	r.c.Response().ResetBody() // whatever a handler had begun to write
	return r.message(fiber.StatusServiceUnavailable, "page.unavailable", "reason.unavailable")
}

// notFound is the page for a thread or token that does not exist.
func (r *pageRequest) notFound() error {
	return r.message(fiber.StatusNotFound, "page.not_found", "page.not_found_text")
}

// signIn starts a fresh session for the human: a new session in the database under a new
// random id, and everything the cookie held before, its CSRF token too, replaced, so that
// nothing planted before the login carries over. The language chosen stays. A session the
// browser had before ends.
func (r *pageRequest) signIn(u *storage.User) error {
	ctx, cancel := r.afterPasswordCheck()
	defer cancel()
	id := randomToken()
	s, err := r.p.db.CreateSession(ctx, u.ID, r.newSession(id))
	if err != nil {
		return err
	}
	if r.session != nil {
		if err := r.p.db.EndSession(ctx, r.session.Hash); err != nil {
			return err
		}
	}
	r.carryOn(id, s, u)
	return nil
}

// afterPasswordCheck is the context of the session's write after a password was checked:
// bounded by a deadline of its own, since the check (waiting for its slot, then argon2id)
// may have used up the request's on a busy machine, and a human who gave the right password
// should not be refused for the time the check took. A hung database still answers within
// that second deadline.
func (r *pageRequest) afterPasswordCheck() (context.Context, context.CancelFunc) {
	return r.p.svc.Bounded(context.WithoutCancel(r.c.UserContext()))
}

// newSession is the row of a session whose cookie will carry id.
func (r *pageRequest) newSession(id string) storage.NewSession {
	return storage.NewSession{
		Hash:      sessionHash(id),
		Agent:     sessionAgent(r.c.Get(fiber.HeaderUserAgent)),
		ExpiresAt: storage.Now().Add(sessionLifetime),
	}
}

// carryOn makes the browser's cookie carry the session id of s, with a new CSRF token.
func (r *pageRequest) carryOn(id string, s *storage.Session, u *storage.User) {
	lang := str(r.sess, sessLang)
	r.sess.Values = map[any]any{sessID: id, sessCSRF: randomToken()}
	if lang != "" {
		r.sess.Values[sessLang] = lang
	}
	r.dirty = true
	r.session, r.user = s, u
	r.page.CSRF = str(r.sess, sessCSRF)
}

// signedOut forgets the session in the browser's cookie (its row is already gone): a new
// CSRF token, the language kept.
func (r *pageRequest) signedOut() {
	lang := str(r.sess, sessLang)
	r.sess.Values = map[any]any{sessCSRF: randomToken()}
	if lang != "" {
		r.sess.Values[sessLang] = lang
	}
	r.dirty = true
	r.session, r.user = nil, nil
}

// save writes the cookie again, which renews it for sessionMaxAge; the session's row is
// renewed with it, so that both expire together, as the cookie alone did before ("each visit
// that changes the session renews it"). A session renewed in the last hour is left as it is.
// A renewal the database does not take leaves the session to its old expiry: the page the
// request answered stays the answer (no fault after the fact, no 500 for a hung database).
func (r *pageRequest) save() error {
	if s := r.session; s != nil {
		until := storage.Now().Add(sessionLifetime)
		if until.Sub(s.ExpiresAt) > time.Hour {
			if err := r.p.db.RenewSession(r.c.UserContext(), s.ID, until); err != nil {
				r.p.log.Warn("renewing a session", "err", err)
			} else {
				s.ExpiresAt = until
			}
		}
	}
	return saveSession(r.p.store, r.c, r.sess)
}

// unavailable reports whether err means the database cannot be reached: its refusal, its
// storage error, or the request's deadline run out in any other work of the request.
func unavailable(err error) bool {
	if refusal, ok := protocol.AsError(err); ok {
		return refusal.Reason == protocol.ReasonUnavailable
	}
	return errors.Is(err, storage.ErrUnavailable) || errors.Is(err, context.DeadlineExceeded)
}

// queryOf is the request's query, for links to the same page.
func queryOf(c *fiber.Ctx) url.Values {
	q, _ := url.ParseQuery(string(c.Request().URI().QueryString()))
	delete(q, "lang")
	return q
}

// localPath keeps target only when it is a path on this server, so that ?next= cannot send a
// reader elsewhere; anything else becomes "/".
func localPath(target string) string {
	u, err := url.Parse(target)
	if err != nil || u.Scheme != "" || u.Host != "" || u.User != nil {
		return "/"
	}
	if !strings.HasPrefix(u.Path, "/") || strings.HasPrefix(u.Path, "//") || strings.Contains(u.Path, "\\") {
		return "/"
	}
	return u.RequestURI()
}
