package protocol

import (
	"context"
	"errors"

	"github.com/parleyforum/parley/protocol/admission"
)

// § 19: heavy work waits its turn. The operation layer and the transports take a slot of the
// work's class from the one gate (protocol/admission) before they start it; a refusal of the
// gate becomes a refusal of § 9 here, once for every transport.

// Admit takes a slot of class for holder (HolderOf), waiting briefly for one: refused as
// rate_limited when the holder holds its share of heavy slots already, as unavailable (with
// the seconds to wait) when every slot of the class stayed taken.
func (s *Service) Admit(ctx context.Context, class admission.Class, holder string) (release func(), err error) {
	release, err = s.gate.Acquire(ctx, class, holder)
	if err == nil {
		return release, nil
	}
	var busy *admission.Busy
	if !errors.As(err, &busy) {
		return nil, Refuse(ReasonUnavailable, "the request ended before the server could take it on")
	}
	if busy.HolderFull {
		refusal := Refuse(ReasonRateLimited, "%s", busy.Error())
		refusal.RetryAfter = busy.RetryAfter
		return nil, refusal
	}
	refusal := Refuse(ReasonUnavailable, "%s", busy.Error())
	refusal.RetryHint = busy.RetryAfter
	return nil, refusal
}

// Gate is the admission gate of this service, shared by every transport of the process.
func (s *Service) Gate() *admission.Gate { return s.gate }

// HolderOf is whom heavy work is counted against: the caller's identity, or for a caller
// without a token the client address it comes from.
func HolderOf(a *Actor, clientAddress string) string {
	if a != nil && a.Identity != "" {
		return a.Identity
	}
	return "address " + clientAddress
}
