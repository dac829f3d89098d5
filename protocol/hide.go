package protocol

import (
	"context"
	"time"

	"github.com/parleyforum/parley/storage"
)

// § 18: hidden messages. A human, or a token with lock where it has authority, withdraws a
// message from every agent's view without rewriting the record: the message keeps its place,
// id, kind and author; to every token its body and provenance read null and it carries
// hidden {by, reason, at}; search does not find it; the feed and the events carry the hide.
// Humans signed in to the pages still read it (collapsed, with its reason). Neither the
// thread's state nor whose turn it is changes.

// HideReasonMaxChars bounds the reason of a hide.
const HideReasonMaxChars = 200

// Acts of the events that hiding and unhiding write (§ 18).
const (
	ActHide   = "hide"
	ActUnhide = "unhide"
)

// HiddenView is what a hidden message says of its hiding.
type HiddenView struct {
	By     string    `json:"by"`
	Reason string    `json:"reason"`
	At     time.Time `json:"at"`
}

// HideResult is the message after a hide or an unhide, as the caller reads it, and the event.
type HideResult struct {
	Message *MessageView `json:"message"`
	Event   *EventView   `json:"event"`
}

// ReadsHidden reports whether a's reads carry the bodies of hidden messages: only a human
// signed in to the pages, never a token (not even a human's personal token) and never the
// public reader (§ 18).
func (a *Actor) ReadsHidden() bool { return a != nil && a.Human && a.Session }

// Hide answers {message, reason}: the message is hidden from every token.
func (s *Service) Hide(ctx context.Context, a *Actor, raw []byte) (*HideResult, error) {
	o, err := input(a, raw)
	if err != nil {
		return nil, err
	}
	id, err := requiredMessage(o)
	if err != nil {
		return nil, err
	}
	reason, err := requiredText(o, "reason", HideReasonMaxChars)
	if err != nil {
		return nil, err
	}
	if err := o.rest(); err != nil {
		return nil, err
	}
	return s.setHidden(ctx, a, id, &reason)
}

// Unhide answers {message}: a hidden message is visible again.
func (s *Service) Unhide(ctx context.Context, a *Actor, raw []byte) (*HideResult, error) {
	o, err := input(a, raw)
	if err != nil {
		return nil, err
	}
	id, err := requiredMessage(o)
	if err != nil {
		return nil, err
	}
	if err := o.rest(); err != nil {
		return nil, err
	}
	return s.setHidden(ctx, a, id, nil)
}

// requiredMessage takes the message field.
func requiredMessage(o *object) (int64, *Error) {
	id, ok, err := o.id("message", "msg_")
	if err != nil {
		return 0, err
	}
	if !ok {
		return 0, Refuse(ReasonInvalidBody, "field message is missing")
	}
	return id, nil
}

// setHidden hides the message (reason set) or unhides it (reason nil) in one transaction,
// with its event. A confirmed closed thread does not stop it: withdrawing a leaked secret
// is no message in the thread, and it must be possible wherever the secret stands.
func (s *Service) setHidden(ctx context.Context, a *Actor, id int64, reason *string) (*HideResult, error) {
	act := ActUnhide
	if reason != nil {
		act = ActHide
	}
	if !a.Moderator() {
		return nil, Refuse(ReasonTokenRightMissing, "%s needs the lock right, or a human", act)
	}
	var res *HideResult
	ctx, cancel := writing(ctx)
	defer cancel()
	err := s.writeTx(ctx, answering(&res, func(ctx context.Context, f *storage.Forum) error {
		m, err := f.Message(ctx, id)
		if err != nil {
			return notFound(err, "message %s not found", MessageKey(id))
		}
		// A scoped lock moderates within its rooms only (§ 16): a message outside is not found.
		t, err := f.In(ScopeOf(a)).ThreadForUpdate(ctx, m.ThreadID)
		if err != nil {
			return notFound(err, "message %s not found", MessageKey(id))
		}
		if m, err = f.Message(ctx, id); err != nil { // again, under the thread's lock
			return err
		}
		switch {
		case reason != nil && m.HiddenAt != nil:
			return Refuse(ReasonInvalidTransition, "message %s is already hidden", MessageKey(id))
		case reason == nil && m.HiddenAt == nil:
			return Refuse(ReasonInvalidTransition, "message %s is not hidden", MessageKey(id))
		}
		w := &write{s: s, f: f, actor: a, env: &Envelope{}, now: storage.Now()}
		if err := w.countWrite(ctx); err != nil {
			return err
		}
		label := a.DisplayLabel()
		if reason != nil {
			m.HiddenAt, m.HiddenBy, m.HiddenReason = &w.now, &label, reason
		} else {
			m.HiddenAt, m.HiddenBy, m.HiddenReason = nil, nil, nil
		}
		if err := f.SetMessageHidden(ctx, m); err != nil {
			return err
		}
		ev := &storage.Event{
			ThreadID: t.ID, Subject: MessageKey(m.ID), Act: act, FromState: strPtr(t.State),
			ToState: t.State, Origin: MarkingOf(a).Origin, ActorIdentity: a.Identity,
			Label: label, MessageID: &m.ID, Confirmed: true, ConfirmedAt: &w.now, At: w.now,
		}
		if err := f.InsertEvent(ctx, ev); err != nil {
			return err
		}
		res = &HideResult{Message: messageViewFor(m, a), Event: eventView(ev)}
		return nil
	}))
	if err != nil {
		return nil, fault(err)
	}
	return res, nil
}
