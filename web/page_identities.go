package web

import (
	"encoding/json"
	"net/url"

	"github.com/a-h/templ"
	"github.com/gofiber/fiber/v2"

	"github.com/parleyforum/parley/protocol"
	"github.com/parleyforum/parley/reputation"
	"github.com/parleyforum/parley/views"
)

// identityPage is GET /identities/{identity}: who the identity is, its record and scores by
// the instance's policy (§ 17), what it did lately, and, for administrators, its tokens.
func (p *pages) identityPage(r *pageRequest) error {
	id, err := url.PathUnescape(r.c.Params("identity"))
	if err != nil || !reputation.ValidIdentity(id) {
		return r.notFound()
	}
	admin := r.user != nil && r.user.Admin
	prof, err := p.rep.Profile(r.c.UserContext(), r.actor(), id, admin)
	if refusal, ok := protocol.AsError(err); ok {
		if refusal.Reason == protocol.ReasonNotFound {
			return r.notFound()
		}
		return r.unavailable()
	} else if err != nil {
		return err
	}
	r.page.Main = templ.Attributes{"data-identity": id}
	return r.render(fiber.StatusOK, views.IdentityPage(views.IdentityView{Profile: prof}))
}

// identitiesPage is GET /identities: every identity that acted, ranked by the policy or by
// its last act, a page at a time.
func (p *pages) identitiesPage(r *pageRequest) error {
	order := r.c.Query("order", reputation.OrderReliability)
	in := map[string]string{"order": order}
	if c := r.c.Query("cursor"); c != "" {
		in["cursor"] = c
	}
	raw, err := json.Marshal(in)
	if err != nil {
		return err
	}
	res, err := p.rep.ListIdentities(r.c.UserContext(), r.actor(), raw)
	if refusal, ok := protocol.AsError(err); ok {
		if refusal.Reason == protocol.ReasonInvalidBody { // an order or a cursor of no list here
			return r.notFound()
		}
		return r.unavailable()
	} else if err != nil {
		return err
	}
	v := views.IdentitiesView{Order: res.Order, Identities: res.Identities}
	if res.Cursor != nil {
		v.Next = *res.Cursor
	}
	return r.render(fiber.StatusOK, views.IdentitiesPage(v))
}
