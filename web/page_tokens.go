package web

import (
	"errors"
	"strconv"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/parleyforum/parley/protocol"
	"github.com/parleyforum/parley/storage"
	"github.com/parleyforum/parley/views"
)

// Administration: the agents' tokens (create, with the secret shown once; list, never a
// secret; revoke) and the list of human accounts. Administrators only (wrap checks).

// tokens is GET /tokens. A secret just created comes from the session, where the create
// left it for this one page, and is removed from it at once.
func (p *pages) tokens(r *pageRequest) error {
	var secret *views.NewSecret
	if s := str(r.sess, sessSecret); s != "" {
		id, _ := strconv.ParseInt(str(r.sess, sessSecretID), 10, 64)
		secret = &views.NewSecret{ID: id, Identity: str(r.sess, sessSecretWhom), Secret: s}
		delete(r.sess.Values, sessSecret)
		delete(r.sess.Values, sessSecretID)
		delete(r.sess.Values, sessSecretWhom)
		r.dirty = true
	}
	return p.renderTokens(r, fiber.StatusOK, views.TokenForm{}, secret)
}

// createToken is POST /tokens: handle, rights (checkboxes) and an optional label, checked by
// the same rules as parley token create.
func (p *pages) createToken(r *pageRequest) error {
	c := r.c
	form := views.TokenForm{Handle: c.FormValue("handle"), Label: c.FormValue("label"), Rooms: c.FormValue("rooms"), Rights: []string{}}
	for _, v := range c.Request().PostArgs().PeekMulti("rights") {
		form.Rights = append(form.Rights, string(v))
	}
	nt := storage.NewToken{Identity: protocol.AgentIdentity(p.svc.Realm(), form.Handle)}
	rights, rightsErr := protocol.ParseRights(strings.Join(form.Rights, ","))
	switch {
	case !protocol.ValidHandle(form.Handle):
		form.Error = "tokens.bad_handle"
	case rightsErr != nil:
		form.Error = "tokens.no_rights"
	case form.Label != "" && protocol.CheckLabel(form.Label) != nil:
		form.Error = "tokens.bad_label"
	}
	if form.Error == "" && strings.TrimSpace(form.Rooms) != "" {
		// § 16: the token reaches only these rooms and the rooms inside them.
		var err error
		if nt.Rooms, err = p.svc.ResolveTokenRooms(c.UserContext(), strings.Split(form.Rooms, ",")); err != nil {
			if _, refused := protocol.AsError(err); !refused {
				return err
			}
			form.Error = "tokens.bad_rooms"
		}
	}
	if form.Error != "" {
		return p.renderTokens(r, fiber.StatusBadRequest, form, nil)
	}
	nt.Rights = rights.String()
	if form.Label != "" {
		nt.Label = &form.Label
	}
	secret, err := protocol.NewTokenSecret()
	if err != nil {
		return err
	}
	nt.SecretHash = protocol.HashTokenSecret(secret)
	t, err := p.db.CreateToken(c.UserContext(), nt)
	if err != nil {
		return err
	}
	shown := &views.NewSecret{ID: t.ID, Identity: t.Identity, Secret: secret}
	if r.htmx() {
		return p.renderTokens(r, fiber.StatusOK, views.TokenForm{}, shown)
	}
	// Post/redirect/get: the secret waits in the (encrypted) session for the one page that
	// shows it.
	r.sess.Values[sessSecret] = secret
	r.sess.Values[sessSecretID] = strconv.FormatInt(t.ID, 10)
	r.sess.Values[sessSecretWhom] = t.Identity
	r.dirty = true
	return r.redirect("/tokens")
}

// revokeToken is POST /tokens/{id}/revoke. It asks first: without confirm=yes it answers the
// page with a step that names the token (its id, identity, label and rights) and revokes
// nothing; that step's own post carries confirm=yes and revokes.
func (p *pages) revokeToken(r *pageRequest) error {
	id, err := strconv.ParseInt(r.c.Params("id"), 10, 64)
	if err != nil {
		return r.notFound()
	}
	if r.c.FormValue("confirm") != "yes" {
		tokens, err := p.db.Tokens(r.c.UserContext())
		if err != nil {
			return err
		}
		for i := range tokens {
			if tokens[i].ID == id {
				return p.renderTokens(r, fiber.StatusOK, views.TokenForm{}, nil, &tokens[i])
			}
		}
		return r.notFound()
	}
	err = p.db.RevokeToken(r.c.UserContext(), id)
	if errors.Is(err, storage.ErrNotFound) {
		return r.notFound()
	} else if err != nil {
		return err
	}
	if r.htmx() {
		return p.renderTokens(r, fiber.StatusOK, views.TokenForm{}, nil)
	}
	return r.redirect("/tokens")
}

// renderTokens shows the page, or for htmx its body alone;
// revoking is the token whose revoke asks first, if any.
func (p *pages) renderTokens(r *pageRequest, status int, form views.TokenForm, secret *views.NewSecret, revoking ...*storage.Token) error {
	ctx := r.c.UserContext()
	tokens, err := p.db.Tokens(ctx)
	if err != nil {
		return err
	}
	users, err := p.db.Users(ctx)
	if err != nil {
		return err
	}
	// The list names each token's rooms; htmx's answer is no full page, which would load
	// them for its navigation.
	r.loadRooms()
	d := views.Tokens{Realm: p.svc.Realm(), Tokens: tokens, Users: users, Secret: secret, Form: form, MCPURL: r.c.BaseURL() + "/mcp"}
	for _, t := range revoking {
		d.Revoking = t
	}
	if r.htmx() {
		return r.render(status, views.TokensBody(d))
	}
	return r.render(status, views.TokensPage(d))
}
