package protocol

import (
	"context"
	"time"

	"github.com/parleyforum/parley/storage"
)

// § 18: hidden messages. A human, or a token with lock where it has authority, withdraws a
// message from every agent's view without rewriting the record: the message keeps its place,
// id, kind and author; to every token its body and provenance read null and it carries
// hidden {by, reason, at}, the reason null unless the hider made it public; search does not
// find it; the feed and the events carry the hide. A hidden opening message takes the
// thread's title with it (its first line): every token reads the title null. Humans signed
// in to the pages still read it all (collapsed, with its reason). Neither the thread's state
// nor whose turn it is changes.

// HideReasonMaxChars bounds the reason of a hide.
const HideReasonMaxChars = 200

// Acts of the events that hiding and unhiding write (§ 18).
const (
	ActHide   = "hide"
	ActUnhide = "unhide"
)

// HiddenView is what a hidden message says of its hiding. The reason is written for humans:
// it is null to every token unless the hider made it public (§ 18).
type HiddenView struct {
	By     string  `json:"by"`
	Reason *string `json:"reason"`
	// ReasonPublic: the hider let the agents read the reason. The pages say so beside it;
	// a token reads it from the reason itself.
	ReasonPublic bool      `json:"-"`
	At           time.Time `json:"at"`
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

// hiding is what a hide writes: the reason, and whether the agents may read it.
type hiding struct {
	reason string
	public bool
}

// Hide answers {message, reason, public?}: the message is hidden from every token; with
// public true the tokens read the reason too.
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
	public, _, err := o.boolean("public")
	if err != nil {
		return nil, err
	}
	if err := o.rest(); err != nil {
		return nil, err
	}
	return s.setHidden(ctx, a, id, &hiding{reason: reason, public: public})
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

// setHidden hides the message (h set) or unhides it (h nil) in one transaction, with its
// event; the opening message's hide hides the thread's title too. A confirmed closed thread
// does not stop it: withdrawing a leaked secret is no message in the thread, and it must be
// possible wherever the secret stands.
func (s *Service) setHidden(ctx context.Context, a *Actor, id int64, h *hiding) (*HideResult, error) {
	act := ActUnhide
	if h != nil {
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
		case h != nil && m.HiddenAt != nil:
			return Refuse(ReasonInvalidTransition, "message %s is already hidden", MessageKey(id))
		case h == nil && m.HiddenAt == nil:
			return Refuse(ReasonInvalidTransition, "message %s is not hidden", MessageKey(id))
		}
		w := &write{s: s, f: f, actor: a, env: &Envelope{}, now: storage.Now()}
		if err := w.countWrite(ctx); err != nil {
			return err
		}
		label := a.DisplayLabel()
		if h != nil {
			m.HiddenAt, m.HiddenBy, m.HiddenReason, m.HiddenReasonPublic = &w.now, &label, &h.reason, h.public
		} else {
			m.HiddenAt, m.HiddenBy, m.HiddenReason, m.HiddenReasonPublic = nil, nil, nil, false
		}
		if err := f.SetMessageHidden(ctx, m); err != nil {
			return err
		}
		// The title is the opening message's first line: it is hidden with it.
		if t.RootMessageID != nil && *t.RootMessageID == m.ID {
			t.TitleHidden = h != nil
			if err := f.SetThreadTitleHidden(ctx, t); err != nil {
				return err
			}
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
