package web

import (
	"errors"
	"strconv"

	"github.com/gofiber/fiber/v2"

	"github.com/parleyforum/parley/storage"
	"github.com/parleyforum/parley/views"
	"github.com/parleyforum/parley/web/password"
)

// The account page: a human changes their password, sees their sessions (one per signed-in
// browser), ends one of them or all of them. Administrators end another human's sessions from
// the tokens page. Every way of ending deletes sessions in the database, so that a copied
// cookie of an ended session signs nobody in.

// account is GET /account.
func (p *pages) account(r *pageRequest) error {
	return p.renderAccount(r, fiber.StatusOK, views.PasswordForm{Done: r.c.Query("done") == "password"})
}

// changePassword is POST /account/password: the current password, the new one twice. A
// change ends every session of the human; the browser that made it carries on under a new
// session id. The current password is checked as a login is: counted first, and within the
// few password slots of the admission gate.
func (p *pages) changePassword(r *pageRequest) error {
	c := r.c
	current, pw := c.FormValue("current"), c.FormValue("password")
	var form views.PasswordForm
	switch err := password.Check(pw); {
	case pw != c.FormValue("password2"):
		form.Error = "setup.differ"
	case errors.Is(err, password.ErrTooLong):
		form.Error, form.Data = "setup.long", []any{"Max", password.MaxBytes}
	case err != nil:
		form.Error, form.Data = "setup.short", []any{"Min", password.MinLength}
	}
	if form.Error != "" {
		return p.renderAccount(r, fiber.StatusBadRequest, form)
	}
	ctx := c.UserContext()
	attempt, ok, err := countLogin(ctx, p.db, clientAddress(c), r.user.Name)
	if err != nil {
		return err
	}
	if !ok {
		c.Set(fiber.HeaderRetryAfter, strconv.Itoa(attempt.retryAfter()))
		return p.renderAccount(r, fiber.StatusTooManyRequests, views.PasswordForm{Error: "login.too_many"})
	}
	// One slot for the check and the new hash: both, one after the other, or neither.
	release, status := p.admitPassword(r)
	if release == nil {
		attempt.takeBack()
		return p.renderAccount(r, status, views.PasswordForm{Error: "login.busy"})
	}
	defer release()
	ok, err = password.Verify(r.user.PasswordHash, current)
	if err != nil {
		return err
	}
	if !ok {
		return p.renderAccount(r, fiber.StatusBadRequest, views.PasswordForm{Error: "account.wrong_password"})
	}
	attempt.succeeded()
	hash, err := password.Hash(pw)
	if err != nil {
		return err
	}
	release()
	write, cancel := r.afterPasswordCheck()
	defer cancel()
	id := randomToken()
	s, err := p.db.ChangePassword(write, r.user.ID, hash, r.newSession(id))
	if err != nil {
		return err
	}
	u := *r.user
	u.PasswordHash = hash
	r.carryOn(id, s, &u)
	return r.redirect("/account?done=password")
}

// endSession is POST /account/sessions/{id}/end: one of the human's own sessions ends.
// Ending this browser's own session is signing out.
func (p *pages) endSession(r *pageRequest) error {
	id, err := strconv.ParseInt(r.c.Params("id"), 10, 64)
	if err != nil {
		return r.notFound()
	}
	if err := p.db.EndSessionOf(r.c.UserContext(), r.user.ID, id); errors.Is(err, storage.ErrNotFound) {
		return r.notFound()
	} else if err != nil {
		return err
	}
	if id == r.session.ID {
		r.signedOut()
		return r.redirect("/login")
	}
	return r.redirect("/account")
}

// signOutEverywhere is POST /account/signout-everywhere: every session of the human ends,
// this browser's too.
func (p *pages) signOutEverywhere(r *pageRequest) error {
	if _, err := p.db.EndSessions(r.c.UserContext(), r.user.ID); err != nil {
		return err
	}
	r.signedOut()
	return r.redirect("/login")
}

// signOutUser is POST /users/{name}/signout (administrators): every session of that human
// ends.
func (p *pages) signOutUser(r *pageRequest) error {
	u, err := p.db.UserByName(r.c.UserContext(), r.c.Params("name"))
	if errors.Is(err, storage.ErrNotFound) {
		return r.notFound()
	} else if err != nil {
		return err
	}
	if _, err := p.db.EndSessions(r.c.UserContext(), u.ID); err != nil {
		return err
	}
	if u.ID == r.user.ID {
		r.signedOut()
		return r.redirect("/login")
	}
	return r.redirect("/tokens")
}

// renderAccount shows the account page with the human's sessions.
func (p *pages) renderAccount(r *pageRequest, status int, form views.PasswordForm) error {
	list, err := p.db.Sessions(r.c.UserContext(), r.user.ID)
	if err != nil {
		return err
	}
	return r.render(status, views.AccountPage(views.Account{Sessions: list, Current: r.session.ID, Form: form}))
}
