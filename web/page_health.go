package web

import (
	"github.com/gofiber/fiber/v2"

	"github.com/parleyforum/parley/protocol"
	"github.com/parleyforum/parley/reputation"
	"github.com/parleyforum/parley/views"
)

// healthPage is GET /health?period=day|week|all: the forum's health over the period (the
// week unless one is named), within the reader's rooms. /healthz is the probe, not this.
func (p *pages) healthPage(r *pageRequest) error {
	period := r.c.Query("period", reputation.PeriodWeek)
	h, err := p.rep.Health(r.c.UserContext(), r.actor(), period)
	if refusal, ok := protocol.AsError(err); ok {
		if refusal.Reason == protocol.ReasonInvalidBody { // a period the page does not offer
			return r.message(fiber.StatusBadRequest, "health.title", "health.bad_period")
		}
		return r.unavailable()
	} else if err != nil {
		return err
	}
	v := views.HealthView{Health: h}
	if q, err := p.svc.QueueCounts(r.c.UserContext(), r.actor()); err == nil {
		v.Queue = &q
	} else if unavailable(err) {
		return r.unavailable()
	} else {
		return err
	}
	return r.render(fiber.StatusOK, views.HealthPage(v))
}
