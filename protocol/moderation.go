package protocol

import (
	"context"

	"github.com/parleyforum/parley/storage"
)

// § 5: confirm and mark, the operations of moderation.

// Acts of the events that moderation writes: a mark's act is "mark", a confirm's ActConfirm.
const ActConfirm = "confirm"

// ModerationResult is the thread after a confirm or mark, and the event it wrote.
type ModerationResult struct {
	Thread *ThreadView `json:"thread"`
	Event  *EventView  `json:"event"`
}

// Confirm answers {thread}: a lock holder or a human confirms the current proposal.
func (s *Service) Confirm(ctx context.Context, a *Actor, raw []byte) (*ModerationResult, error) {
	o, id, err := threadInput(a, raw)
	if err != nil {
		return nil, err
	}
	if err := o.rest(); err != nil {
		return nil, err
	}
	if !a.Moderator() {
		return nil, Refuse(ReasonTokenRightMissing, "confirm needs the lock right or a human")
	}
	return s.moderate(ctx, a, id, func(t *storage.Thread) (State, *Error) {
		if t.StateConfirmedAt != nil {
			return "", Refuse(ReasonInvalidTransition, "the state %s of thread %s is already confirmed", t.State, ThreadKey(t.ID))
		}
		return State(t.State), nil
	}, ActConfirm)
}

// Mark answers {thread, state}: a human re-marks the thread with any state, confirmed — how a
// human sets a wrong proposal right.
func (s *Service) Mark(ctx context.Context, a *Actor, raw []byte) (*ModerationResult, error) {
	o, id, err := threadInput(a, raw)
	if err != nil {
		return nil, err
	}
	state, ok, err := o.str("state")
	if err != nil {
		return nil, err
	}
	if !ok || !IsState(State(state)) {
		return nil, Refuse(ReasonInvalidBody, "field state must be one of open, answered, decided, closed, deferred, obsolete, rejected")
	}
	if err := o.rest(); err != nil {
		return nil, err
	}
	if !a.Human {
		return nil, Refuse(ReasonTokenRightMissing, "mark is for humans only")
	}
	return s.moderate(ctx, a, id, func(*storage.Thread) (State, *Error) { return State(state), nil }, "mark")
}

// moderate runs a confirm or a mark in one transaction: target decides the state (or
// refuses), and the event records it.
func (s *Service) moderate(ctx context.Context, a *Actor, id int64, target func(*storage.Thread) (State, *Error), act string) (*ModerationResult, error) {
	var res *ModerationResult
	ctx, cancel := writing(ctx)
	defer cancel()
	err := s.writeTx(ctx, answering(&res, func(ctx context.Context, f *storage.Forum) error {
		// A scoped lock moderates within its rooms only (§ 16): a thread outside is not found.
		t, err := f.In(ScopeOf(a)).ThreadForUpdate(ctx, id)
		if err != nil {
			return notFound(err, "thread %s not found", ThreadKey(id))
		}
		if isLocked(t) {
			return Refuse(ReasonThreadClosed, "thread %s is closed and confirmed; reopen it first", ThreadKey(t.ID))
		}
		next, refusal := target(t)
		if refusal != nil {
			return refusal
		}
		w := &write{s: s, f: f, actor: a, env: &Envelope{}, now: storage.Now()}
		if err := w.countWrite(ctx); err != nil {
			return err
		}
		from := State(t.State)
		mark := MarkingOf(a)
		ev := &storage.Event{
			ThreadID: t.ID, Subject: ThreadKey(t.ID), Act: act, FromState: strPtr(string(from)),
			ToState: string(next), Origin: mark.Origin, ActorIdentity: a.Identity,
			Label: a.DisplayLabel(), Confirmed: true, ConfirmedAt: &w.now, At: w.now,
		}
		if act == ActConfirm {
			ev.ConfirmsEventID = t.StateEventID
		}
		if err := f.InsertEvent(ctx, ev); err != nil {
			return err
		}
		before := *t
		if act == ActConfirm {
			if t.StateEventID != nil {
				if err := f.ConfirmEvent(ctx, *t.StateEventID, w.now); err != nil {
					return err
				}
			}
			t.StateConfirmedAt = &w.now
			t.ConfirmedState = t.State
			t.InboxTo = inboxTo(t)
		} else {
			setState(t, next, mark, ev, w.now)
		}
		t.UpdatedAt = w.now
		if err := f.UpdateThread(ctx, t, inboxMoved(&before, t)); err != nil {
			return err
		}
		res = &ModerationResult{Thread: threadViewFor(t, a), Event: eventView(ev)}
		return nil
	}))
	if err != nil {
		return nil, fault(err)
	}
	s.announce(res.Thread)
	return res, nil
}

func strPtr(s string) *string { return &s }
