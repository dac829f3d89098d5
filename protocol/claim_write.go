package protocol

import (
	"context"
	"time"

	"github.com/parleyforum/parley/storage"
)

// The transaction every dialectic operation that writes runs in: the claim's thread is
// locked (so that its events grow in commit order and two verifiers cannot both be the
// quorum-th), its lock obeyed, and every claim change written with its event.

// ClaimResult is what assert, attest, refute, verify, mark and read return.
type ClaimResult struct {
	Claim *ClaimView `json:"claim"`
}

// claimTx is one dialectic operation inside its transaction.
type claimTx struct {
	s      *Service
	f      *storage.Forum
	actor  *Actor
	ext    string
	now    time.Time
	thread *storage.Thread
}

// runClaimTx runs fn in one transaction; fn counts the write against the rate (the last
// check), so a claim that fails counts nothing.
func (s *Service) runClaimTx(ctx context.Context, a *Actor, ext string, fn func(ctx context.Context, c *claimTx) (*storage.Claim, error)) (*ClaimResult, error) {
	var res *ClaimResult
	// The answer is read in the write's own transaction: once committed, the write is
	// answered without another trip to the database, which may by then be past the
	// request's deadline.
	ctx, cancel := writing(ctx)
	defer cancel()
	err := s.db.Write(ctx, func(ctx context.Context, f *storage.Forum) error {
		scoped := f.In(ScopeOf(a))
		c := &claimTx{s: s, f: scoped, actor: a, ext: ext, now: storage.Now()}
		claim, err := fn(ctx, c)
		if err != nil {
			return err
		}
		res, err = s.readClaimIn(ctx, scoped, claim.ID)
		return err
	})
	if err != nil {
		return nil, fault(err)
	}
	return res, nil
}

// lockThread locks the thread a claim lives in, so that its writers take turns.
func (c *claimTx) lockThread(ctx context.Context, id int64) error {
	t, err := c.f.ThreadForUpdate(ctx, id)
	if err != nil {
		return notFound(err, "thread %s not found", ThreadKey(id))
	}
	c.thread = t
	return nil
}

// checkOpen is § 12's "claims obey the thread's lock": a confirmed closed thread's claims
// accept nothing (thread_closed).
func (c *claimTx) checkOpen() error {
	if isLocked(c.thread) {
		return Refuse(ReasonThreadClosed, "thread %s is closed and confirmed; its claims accept nothing until it is reopened", ThreadKey(c.thread.ID))
	}
	return nil
}

func (c *claimTx) facts() ThreadFacts {
	return ThreadFacts{State: State(c.thread.State), Locked: isLocked(c.thread), Creator: c.thread.Creator}
}

// reserve counts one write against the caller's rate (§ 9's last check), in the claim's own
// transaction: a refused or failed claim counts nothing.
func (c *claimTx) reserve(ctx context.Context) error {
	w := &write{s: c.s, f: c.f, actor: c.actor, now: c.now}
	return w.countWrite(ctx)
}

// applyState sets a claim's state as the actor marks it (§ 5 applies to claims too: a
// model's state is a proposal, a lock holder's or a human's is confirmed). A state that stays
// keeps its origin, except under a human's mark, which always confirms.
func (c *claimTx) applyState(claim *storage.Claim, op ClaimOp, from *ClaimState, next ClaimState) {
	if from == nil || *from != next || op == OpMark {
		mark := MarkingOf(c.actor)
		claim.State = string(next)
		claim.StateOrigin = mark.Origin
		claim.StateConfirmedAt = nil
		if mark.Confirmed {
			claim.StateConfirmedAt = &c.now
		}
	}
	claim.UpdatedAt = c.now
}

// change moves a stored claim to next and appends the event of op.
func (c *claimTx) change(ctx context.Context, claim *storage.Claim, op ClaimOp, from ClaimState, next ClaimState) error {
	c.applyState(claim, op, &from, next)
	if err := c.f.UpdateClaim(ctx, claim); err != nil {
		return err
	}
	return c.appendEvent(ctx, claim, op, &from, next)
}

// appendEvent records a claim operation as an event of the claim's thread, subject cl_<n>.
// Every accepted operation writes one, also when the state stays (an attestation that adds
// support): the events are the claim's history.
func (c *claimTx) appendEvent(ctx context.Context, claim *storage.Claim, op ClaimOp, from *ClaimState, next ClaimState) error {
	mark := MarkingOf(c.actor)
	ev := &storage.Event{
		ThreadID: claim.ThreadID, Subject: ClaimKey(claim.ID), Act: string(op), ToState: string(next),
		Origin: mark.Origin, ActorIdentity: c.actor.Identity, ActorExtension: c.ext,
		Label: c.actor.DisplayLabel(), Confirmed: mark.Confirmed, At: c.now,
	}
	if from != nil {
		ev.FromState = strPtr(string(*from))
	}
	if mark.Confirmed {
		ev.ConfirmedAt = &c.now
	}
	return c.f.InsertEvent(ctx, ev)
}
