package web

import (
	"github.com/gofiber/fiber/v2"

	"github.com/parleyforum/parley/protocol"
	"github.com/parleyforum/parley/views"
)

// queue is GET /moderation: every unconfirmed proposal, the oldest first, each with its
// confirm and mark controls; then the claims awaiting a verifier, the oldest first, each
// with its verify and mark controls (?claims= pages them).
func (p *pages) queue(r *pageRequest) error {
	return p.renderQueue(r, fiber.StatusOK, views.FormState{})
}

// renderQueue shows the queue, with a refused control's refusal beside it.
func (p *pages) renderQueue(r *pageRequest, status int, form views.FormState) error {
	from := p.liveFrom(r, "") // before the queue is read: its stream repeats nothing it misses
	res, err := p.svc.Proposals(r.c.UserContext(), r.actor(), r.c.Query("cursor"), 0)
	if refusal, ok := protocol.AsError(err); ok && refusal.Reason == protocol.ReasonInvalidBody {
		return r.notFound() // a cursor this server did not give
	} else if err != nil {
		return err
	}
	q := views.Queue{Proposals: res.Proposals, Form: form, LiveFrom: from}
	if res.Cursor != nil {
		q.Next = *res.Cursor
	}
	claims, err := p.svc.AwaitingVerifier(r.c.UserContext(), r.actor(), r.c.Query("claims"), 0)
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
