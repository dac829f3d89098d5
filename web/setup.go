package web

import (
	"crypto/subtle"
	"errors"

	"github.com/gofiber/fiber/v2"

	"github.com/parleyforum/parley/protocol"
	"github.com/parleyforum/parley/storage"
	"github.com/parleyforum/parley/views"
	"github.com/parleyforum/parley/web/password"
)

// The one-time setup address that parley serve prints while no human account exists: a form
// that creates the first account, an administrator, and signs it in. Then the address stops
// existing.

// setupForm is GET /setup?code=….
func (p *pages) setupForm(r *pageRequest) error {
	code := r.c.Query("code")
	if ok, err := setupCodeValid(r.c, p.db, code); err != nil || !ok {
		return p.setupGone(r, err)
	}
	return r.render(fiber.StatusOK, views.SetupPage(views.SetupForm{Code: code}))
}

// setup is POST /setup.
func (p *pages) setup(r *pageRequest) error {
	c := r.c
	form := views.SetupForm{Code: c.FormValue("code"), Name: c.FormValue("name")}
	if ok, err := setupCodeValid(c, p.db, form.Code); err != nil || !ok {
		return p.setupGone(r, err)
	}
	pw := c.FormValue("password")
	switch err := password.Check(pw); {
	case !protocol.ValidHandle(form.Name):
		form.Error = "setup.bad_name"
	case pw != c.FormValue("password2"):
		form.Error = "setup.differ"
	case errors.Is(err, password.ErrTooLong):
		form.Error, form.Data = "setup.long", []any{"Max", password.MaxBytes}
	case err != nil:
		form.Error, form.Data = "setup.short", []any{"Min", password.MinLength}
	}
	if form.Error != "" {
		return r.render(fiber.StatusBadRequest, views.SetupPage(form))
	}
	release, status := p.admitPassword(r)
	if release == nil {
		form.Error = "login.busy"
		return r.render(status, views.SetupPage(form))
	}
	hash, err := password.Hash(pw)
	release()
	if err != nil {
		return err
	}
	u, err := p.db.CreateFirstUser(c.UserContext(), form.Name, hash)
	if errors.Is(err, storage.ErrAlreadyExists) {
		return p.setupGone(r, nil) // another setup form won the race: the address is gone
	} else if err != nil {
		return err
	}
	if err := p.db.DeleteSetting(c.UserContext(), storage.SettingSetupCode); err != nil {
		p.log.Error("removing the setup code", "err", err) // harmless: the code no longer works
	}
	if err := r.signIn(u); err != nil {
		return err
	}
	return r.redirect("/")
}

// setupGone answers a setup address that does not work (a fault goes to the error handler).
// Once an account exists the address is gone for good, and whoever follows it (the one who
// set up the forum, most likely, from an old tab or the server's log) reads that the forum
// is set up already, with the way to sign in: that an account exists is no secret, the login
// page says as much. Before that, a wrong code is the plain 404 page, so that a guesser learns
// nothing.
func (p *pages) setupGone(r *pageRequest, err error) error {
	if err != nil {
		return err
	}
	n, err := p.db.CountUsers(r.c.UserContext())
	if err != nil {
		return err
	}
	if n == 0 {
		return r.notFound()
	}
	tr := r.page.Tr
	return r.render(fiber.StatusNotFound, views.ErrorPage(views.ErrorView{
		Status: fiber.StatusNotFound, Title: tr.T("setup.already"), Text: tr.T("setup.done"),
		Link: "/login", LinkText: tr.T("nav.login"),
	}))
}

// setupCodeValid reports whether code is the setup code and no user exists yet.
func setupCodeValid(c *fiber.Ctx, db *storage.DB, code string) (bool, error) {
	ctx := c.UserContext()
	n, err := db.CountUsers(ctx)
	if err != nil || n > 0 {
		return false, err
	}
	want, err := db.Setting(ctx, storage.SettingSetupCode)
	if errors.Is(err, storage.ErrNotFound) {
		return false, nil
	} else if err != nil {
		return false, err
	}
	return code != "" && subtle.ConstantTimeCompare([]byte(code), []byte(want)) == 1, nil
}
