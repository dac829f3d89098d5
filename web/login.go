package web

import (
	"errors"
	"strconv"
	"sync"

	"github.com/gofiber/fiber/v2"

	"github.com/parleyforum/parley/storage"
	"github.com/parleyforum/parley/views"
	"github.com/parleyforum/parley/web/password"
)

// dummyHash is checked when the name is unknown, so that a wrong name costs the same time
// as a wrong password and the answer tells nothing about which names exist. It is made once,
// when the first pages are built (newPages starts it), not when the package is loaded: a hash
// costs 64 MiB and a quarter of a second, which every command of the binary — parley version,
// parley token add — would otherwise pay without ever serving a login.
var dummyHash = sync.OnceValue(func() string {
	h, err := password.Hash("parley-no-such-account")
	if err != nil {
		panic(err)
	}
	return h
})

// loginForm is GET /login.
func (p *pages) loginForm(r *pageRequest) error {
	next := localPath(r.c.Query("next"))
	if r.user != nil {
		return r.redirect(next)
	}
	n, err := p.db.CountUsers(r.c.UserContext())
	if err != nil {
		return err
	}
	return r.render(fiber.StatusOK, views.LoginPage(views.LoginForm{Next: next, NoAccount: n == 0}))
}

// login is POST /login: the same answer for a wrong name and a wrong password. The attempt
// is counted before the password is checked (login_limit.go), and the check waits for one of
// the few password slots of the admission gate (admitPassword): too many attempts (429), or
// too many checks at once (503, or 429 for the address's own), are refused before any is made.
func (p *pages) login(r *pageRequest) error {
	c := r.c
	name, pw := c.FormValue("name"), c.FormValue("password")
	form := views.LoginForm{Name: name, Next: localPath(c.FormValue("next"))}
	if len([]rune(name)) > loginNameMaxChars {
		form.Name = "" // not shown again, not kept
	}
	ctx := c.UserContext()
	attempt, ok, err := countLogin(ctx, p.db, clientAddress(c), name)
	if err != nil {
		return err
	}
	if !ok {
		form.Error = "login.too_many"
		c.Set(fiber.HeaderRetryAfter, strconv.Itoa(attempt.retryAfter()))
		return r.render(fiber.StatusTooManyRequests, views.LoginPage(form))
	}
	var u *storage.User
	hash := dummyHash()
	if form.Name != "" {
		u, err = p.db.UserByName(ctx, name)
		switch {
		case err == nil:
			hash = u.PasswordHash
		case errors.Is(err, storage.ErrNotFound):
			u = nil
		default:
			attempt.takeBack()
			return err
		}
	}
	release, status := p.admitPassword(r)
	if release == nil {
		attempt.takeBack()
		form.Error = "login.busy"
		return r.render(status, views.LoginPage(form))
	}
	ok, err = password.Verify(hash, pw)
	release()
	if err != nil {
		return err // a stored hash this server did not write
	}
	if !ok || u == nil {
		form.Error = "login.failed"
		return r.render(fiber.StatusUnauthorized, views.LoginPage(form))
	}
	attempt.succeeded()
	if err := r.signIn(u); err != nil {
		return err
	}
	return r.redirect(form.Next)
}

// logout is POST /logout: the session ends in the database — every copy of its cookie signs
// nobody in from now on — and the browser's cookie gets a new CSRF token.
func (p *pages) logout(r *pageRequest) error {
	if r.session != nil {
		if err := p.db.EndSession(r.c.UserContext(), r.session.Hash); err != nil {
			return err
		}
	}
	r.signedOut()
	return r.redirect("/login")
}
