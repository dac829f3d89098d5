package web

import (
	"regexp"

	"github.com/a-h/templ"
	"github.com/gofiber/fiber/v2"

	"github.com/parleyforum/parley/protocol"
	"github.com/parleyforum/parley/views"
)

// A human's verify and re-mark of a claim, on the thread page (under the claim's anchor) or
// in the moderation queue (form field view). Each is the operation HTTP and MCP call, with
// the human's actor; a plain form post redirects back (303) to the claim's card, htmx gets
// the card or the queue's row alone, and a refusal shows beside the control that was used.

// verifyClaim is POST /claims/{id}/verify.
func (p *pages) verifyClaim(r *pageRequest) error {
	id, ok := claimParam(r)
	if !ok {
		return r.notFound()
	}
	_, err := p.svc.Verify(r.c.UserContext(), r.actor(), claimInput(id, nil))
	return p.claimActed(r, id, "verify", views.FormState{}, err)
}

// markClaim is POST /claims/{id}/mark.
func (p *pages) markClaim(r *pageRequest) error {
	id, ok := claimParam(r)
	if !ok {
		return r.notFound()
	}
	state := r.c.FormValue("state")
	_, err := p.svc.MarkClaim(r.c.UserContext(), r.actor(), claimInput(id, map[string]any{"state": state}))
	return p.claimActed(r, id, "mark", views.FormState{State: state}, err)
}

// claimActed answers a verify or a mark: the claim as it is now, or the refusal beside the
// control.
func (p *pages) claimActed(r *pageRequest, id, action string, form views.FormState, err error) error {
	view := "thread"
	if inQueue(r) {
		view = r.c.FormValue("view") // queue (awaiting a verifier) or proposal (a model's)
	}
	refusal, refused := protocol.AsError(err)
	if err != nil && !refused {
		return err
	}
	if refused {
		form.ID, form.Refusal = views.ClaimControlID(action, id, view), refusal
		if r.htmx() {
			return r.refusedFragment(form.ID, refusal)
		}
	}
	// The claim is read again (the refusal too shows it as it is), as the human reads it.
	read, rerr := p.svc.ReadClaim(r.c.UserContext(), r.actor(), claimInput(id, nil))
	if rerr != nil {
		return p.refusedRead(r, rerr)
	}
	claim := read.Claim
	switch {
	case refused && view != "thread":
		return p.renderQueue(r, refusal.Status, form)
	case refused:
		return p.renderThread(r, claim.Thread, refusal.Status, form)
	case !r.htmx() && view != "thread" && r.c.FormValue("undo") == "yes":
		r.keepUndone(id, string(claim.State)) // the queue shows its result lines again, this one undone
		return r.redirect("/moderation")
	case !r.htmx() && view != "thread":
		return r.redirect("/moderation#" + view + "-" + id)
	case !r.htmx():
		return r.redirect("/threads/" + claim.Thread + "#" + id)
	case view != "thread" && r.c.FormValue("undo") == "yes":
		return r.render(fiber.StatusOK, views.UndoneResult(views.Confirmed{Subject: id, State: string(claim.State)}))
	case view == "queue":
		return r.render(fiber.StatusOK, views.ClaimQueueRow(views.ClaimCard{Claim: claim, View: view}))
	case view == "proposal":
		return r.render(fiber.StatusOK, views.ClaimProposalRow(protocol.ClaimProposal{Claim: claim}, views.FormState{}))
	}
	tp, err := p.readThread(r, claim.Thread)
	if err != nil {
		return err
	}
	// The thread page shows the first page of a thread's claims (read_thread); a claim past
	// it is shown as the operation answered it.
	for _, c := range tp.Claims {
		if c.ID == id {
			claim = c
		}
	}
	card := views.ClaimCard{Claim: claim, Grounded: tp.Grounded[id], Artifacts: tp.Artifacts, View: view}
	return r.render(fiber.StatusOK, templ.Join(views.ClaimCardView(card), oob(views.Timeline(tp.Events))))
}

// claimInput is the JSON input of an operation on claim id, with more fields.
func claimInput(id string, more map[string]any) []byte {
	return operationInput("claim", id, more)
}

// claimParam is the claim of the route in its prefixed form (cl_7 for 7 too); ok is false
// for anything that is not a claim id.
func claimParam(r *pageRequest) (string, bool) {
	m := claimKey.FindStringSubmatch(r.c.Params("id"))
	if m == nil {
		return "", false
	}
	return "cl_" + m[1], true
}

var claimKey = regexp.MustCompile(`^(?:cl_)?([0-9]{1,19})$`)
