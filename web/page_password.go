package web

import (
	"strconv"

	"github.com/gofiber/fiber/v2"

	"github.com/parleyforum/parley/protocol"
	"github.com/parleyforum/parley/protocol/admission"
)

// admitPassword takes a slot of the admission gate's Password class for the reader (§ 19):
// each argon2id hash or check holds 64 MiB while it runs, so the gate bounds how many run at
// once, sized from the memory limit, and how many one reader (a human, or a client address
// before a login) runs. release is nil when no slot was given: then status is the answer's —
// 503 when every slot stayed taken for the gate's short wait, 429 when the reader has its
// share running — and Retry-After is set.
func (p *pages) admitPassword(r *pageRequest) (release func(), status int) {
	release, err := p.svc.Admit(r.c.UserContext(), admission.Password, r.holder())
	if err == nil {
		return release, 0
	}
	status, retry := fiber.StatusServiceUnavailable, protocol.UnavailableRetryAfter
	if refusal, ok := protocol.AsError(err); ok {
		status, retry = refusal.Status, max(refusal.RetryAfter, refusal.RetryHint, 1)
	}
	r.c.Set(fiber.HeaderRetryAfter, strconv.Itoa(retry))
	return nil, status
}
