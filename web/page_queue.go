package web

import (
	"strings"

	"github.com/a-h/templ"
	"github.com/gofiber/fiber/v2"

	"github.com/parleyforum/parley/protocol"
	"github.com/parleyforum/parley/views"
)

// queue is GET /moderation: every unconfirmed proposal, the oldest first — the threads', then
// the claims' — each with its confirm and mark controls; then the claims awaiting a verifier,
// the oldest first, each with its verify and mark controls (?cursor=, ?proposals= and
// ?claims= page the three lists). The result lines of the confirms just done without
// JavaScript come from the session, where the confirm left them for this one page.
func (p *pages) queue(r *pageRequest) error {
	results, none := r.takeConfirmed()
	return p.renderQueue(r, fiber.StatusOK, views.FormState{}, queueResults{results: results, noneSelected: none})
}

// queueResults are the result lines a queue page shows: the confirms just done, or that
// Confirm selected was sent with nothing selected.
type queueResults struct {
	results      []views.Confirmed
	noneSelected bool
}

// renderQueue shows the queue, with a refused control's refusal beside it and the result
// lines of the confirms just done, if any.
func (p *pages) renderQueue(r *pageRequest, status int, form views.FormState, done ...queueResults) error {
	from := p.liveFrom(r, "") // before the queue is read: its stream repeats nothing it misses
	ctx, actor := r.c.UserContext(), r.actor()
	res, err := p.svc.Proposals(ctx, actor, r.c.Query("cursor"), 0)
	if refusal, ok := protocol.AsError(err); ok && refusal.Reason == protocol.ReasonInvalidBody {
		return r.notFound() // a cursor this server did not give
	} else if err != nil {
		return err
	}
	q := views.Queue{Proposals: res.Proposals, Form: form, LiveFrom: from}
	for _, d := range done {
		q.Results, q.NoneSelected = d.results, d.noneSelected
	}
	if res.Cursor != nil {
		q.Next = *res.Cursor
	}
	proposals, err := p.svc.ClaimProposals(ctx, actor, r.c.Query("proposals"), 0)
	if refusal, ok := protocol.AsError(err); ok && refusal.Reason == protocol.ReasonInvalidBody {
		return r.notFound()
	} else if err != nil {
		return err
	}
	q.ClaimProposals = proposals.Proposals
	if proposals.Cursor != nil {
		q.ProposalsNext = *proposals.Cursor
	}
	claims, err := p.svc.AwaitingVerifier(ctx, actor, r.c.Query("claims"), 0)
	if refusal, ok := protocol.AsError(err); ok && refusal.Reason == protocol.ReasonInvalidBody {
		return r.notFound()
	} else if err != nil {
		return err
	}
	q.Claims = claims.Claims
	if claims.Cursor != nil {
		q.ClaimsNext = *claims.Cursor
	}
	return r.render(status, views.QueuePage(q))
}

// confirmClaim is POST /claims/{id}/confirm: a human confirms the claim's proposal, a mark
// with its own state (protocol.ConfirmClaim decides).
func (p *pages) confirmClaim(r *pageRequest) error {
	id, ok := claimParam(r)
	if !ok {
		return r.notFound()
	}
	if !inQueue(r) {
		_, err := p.svc.ConfirmClaim(r.c.UserContext(), r.actor(), claimInput(id, nil))
		return p.claimActed(r, id, "confirm", views.FormState{}, err)
	}
	done, row, err := p.confirmItem(r, id)
	if err != nil {
		return p.refusedInQueue(r, id, err)
	}
	return p.confirmedInQueue(r, done, row)
}

// refusedInQueue shows a confirm refused in the queue as a result line at the queue's head,
// since the row it was used in may be gone (another human confirmed it first): htmx swaps
// the result lines alone, a plain post gets the queue again, both in the refusal's status.
func (p *pages) refusedInQueue(r *pageRequest, subject string, err error) error {
	refusal, refused := protocol.AsError(err)
	if !refused {
		return err
	}
	done := []views.Confirmed{{Subject: subject, Refusal: refusal}}
	if r.htmx() {
		r.c.Set("HX-Retarget", "#queue-results")
		r.c.Set("HX-Reswap", "outerHTML")
		return r.render(refusal.Status, views.QueueResults(done, false))
	}
	return p.renderQueue(r, refusal.Status, views.FormState{}, queueResults{results: done})
}

// inQueue reports whether a control was used in the queue (form field view) rather than on
// a thread page.
func inQueue(r *pageRequest) bool {
	v := r.c.FormValue("view")
	return v == "queue" || v == "proposal"
}

// confirmItem confirms one thread's or claim's proposal as its own operation and says what
// it did: the result line, with the state its Undo re-marks back to (a thread's last
// confirmed state before, a claim's state before its proposal), and the queue's row as it
// is now. A refusal comes back as the error, for the caller to show where it belongs.
func (p *pages) confirmItem(r *pageRequest, subject string) (views.Confirmed, templ.Component, error) {
	ctx, actor := r.c.UserContext(), r.actor()
	done := views.Confirmed{Subject: subject}
	if strings.HasPrefix(subject, "cl_") {
		res, err := p.svc.ConfirmClaim(ctx, actor, claimInput(subject, nil))
		if err != nil {
			return done, nil, err
		}
		done.State, done.Back = string(res.Claim.State), string(res.Was)
		return done, views.ClaimProposalRow(protocol.ClaimProposal{Claim: res.Claim}, views.FormState{}), nil
	}
	before, err := p.svc.ReadThread(ctx, actor, threadInput(subject, nil))
	if err != nil {
		return done, nil, err
	}
	res, err := p.svc.Confirm(ctx, actor, threadInput(subject, nil))
	if err != nil {
		return done, nil, err
	}
	done.State = string(res.Thread.State)
	if back := string(before.Thread.ConfirmedState); back != done.State {
		done.Back = back
	}
	return done, views.QueueRow(protocol.Proposal{Thread: res.Thread}, views.FormState{}), nil
}

// confirmedInQueue answers a confirm done in the queue: htmx swaps the row, and the result
// line out of band into the result lines at the queue's head, which the live refresh of the
// lists leaves alone (a confirmed row leaves the queue at the next event); a plain post
// leaves the result line in the session and redirects to the queue.
func (p *pages) confirmedInQueue(r *pageRequest, done views.Confirmed, row templ.Component) error {
	if r.htmx() {
		return r.render(fiber.StatusOK, templ.Join(row, oob(views.QueueResults([]views.Confirmed{done}, false))))
	}
	r.keepConfirmed([]views.Confirmed{done}, false)
	return r.redirect("/moderation")
}

// maxSelected is how many items one Confirm selected takes; the queue's pages are smaller.
const maxSelected = 200

// confirmSelected is POST /moderation/confirm with the fields item (th_N or cl_N, repeated):
// each is confirmed as its own operation, so one refusal stops none of the others; the
// result lines list what each did, refusals with their reason. htmx gets the queue again
// (the form swaps its list and the result lines); a plain post redirects to it.
func (p *pages) confirmSelected(r *pageRequest) error {
	var results []views.Confirmed
	seen := map[string]bool{}
	for _, raw := range r.c.Request().PostArgs().PeekMulti("item") {
		item := string(raw)
		if seen[item] || len(results) == maxSelected {
			continue
		}
		seen[item] = true
		subject, ok := queueSubject(item)
		if !ok {
			results = append(results, views.Confirmed{Subject: shortened(item), Refusal: protocol.Refuse(protocol.ReasonInvalidBody, "not a thread or a claim")})
			continue
		}
		done, _, err := p.confirmItem(r, subject)
		if refusal, refused := protocol.AsError(err); refused {
			done.Refusal = refusal
		} else if err != nil {
			return err
		}
		results = append(results, done)
	}
	if r.htmx() {
		return p.renderQueue(r, fiber.StatusOK, views.FormState{}, queueResults{results: results, noneSelected: len(results) == 0})
	}
	r.keepConfirmed(results, len(results) == 0)
	return r.redirect("/moderation")
}

// queueSubject is a selected item in its prefixed form (th_7, cl_7); ok is false for
// anything else. A bare number names nothing here: it could be either.
func queueSubject(item string) (string, bool) {
	if m := threadKey.FindStringSubmatch(item); m != nil && item != m[1] {
		return "th_" + m[1], true
	}
	if m := claimKey.FindStringSubmatch(item); m != nil && item != m[1] {
		return "cl_" + m[1], true
	}
	return "", false
}

// shortened is at most 40 bytes of a string a page repeats from a form, whole runes only.
func shortened(s string) string {
	if len(s) <= 40 {
		return s
	}
	cut := 40
	for cut > 0 && s[cut]&0xC0 == 0x80 {
		cut--
	}
	return s[:cut] + "…"
}

// loadQueueCount gives the navigation how many proposals wait in the queue; a page without
// it still renders, without the count.
func (r *pageRequest) loadQueueCount() {
	if r.page == nil || r.page.QueueCount >= 0 {
		return
	}
	if n, err := r.p.svc.QueueCount(r.c.UserContext(), r.actor()); err == nil {
		r.page.QueueCount = n
	}
}
