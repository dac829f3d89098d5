package protocol

import (
	"context"
	"errors"
	"time"

	"github.com/parleyforum/parley/storage"
)

// SendResult is what an accepted envelope returns: the message and the thread after it.
type SendResult struct {
	Message *MessageView `json:"message"`
	Thread  *ThreadView  `json:"thread"`
}

// Send decodes raw as an envelope and sends it. The checks run in the order of § 9.
func (s *Service) Send(ctx context.Context, a *Actor, raw []byte) (*SendResult, error) {
	if a == nil {
		return nil, requireActor(a, RightWrite)
	}
	env, err := DecodeEnvelope(raw, s.limits)
	if err != nil {
		return nil, err
	}
	return s.SendEnvelope(ctx, a, env)
}

// SendEnvelope sends an envelope that is already decoded (the pages build their own).
func (s *Service) SendEnvelope(ctx context.Context, a *Actor, env *Envelope) (*SendResult, error) {
	if err := requireActor(a, RightWrite); err != nil {
		return nil, err
	}
	var result *SendResult
	// The write runs under the request's deadline until its commit (storage.DB.Write): a
	// database that does not answer in time rolls it back and the client is answered
	// unavailable; a committed write is answered as committed. A caller that goes away does
	// not end it (writing).
	ctx, cancel := writing(ctx)
	defer cancel()
	err := s.writeTx(ctx, func(ctx context.Context, f *storage.Forum) (any, error) {
		var err error
		w := &write{s: s, f: f.In(ScopeOf(a)), actor: a, env: env, now: storage.Now()}
		if env.Thread == 0 && env.Parent == 0 {
			result, err = w.open(ctx)
		} else {
			result, err = w.reply(ctx)
		}
		return result, err
	})
	if err != nil {
		return nil, fault(err)
	}
	s.announce(result.Thread)
	return result, nil
}

// write is one envelope on its way into one transaction.
type write struct {
	s     *Service
	f     *storage.Forum
	actor *Actor
	env   *Envelope
	now   time.Time
}

// countWrite is the last check (§ 9): it records the write in the database, in the write's
// own transaction, and refuses it when its identity has made writes_per_minute writes within
// the last minute. The record is the database's, so the limit holds across every instance on
// it; a refused or failed write rolls its record back with everything else. Humans are not
// rate-limited.
func (w *write) countWrite(ctx context.Context) error {
	if w.actor.Human {
		return nil
	}
	free, ok, err := w.f.CountWrite(ctx, w.actor.Identity, w.actor.TokenID, w.now, w.s.limits.WritesPerMinute)
	if err != nil || ok {
		return revokedSinceVerified(err)
	}
	return w.rateLimited(free)
}

// revokedSinceVerified refuses a write whose token was revoked after Authenticate verified
// it, as Authenticate would have refused it (§ 1); other errors pass as they are.
func revokedSinceVerified(err error) error {
	if errors.Is(err, storage.ErrRevoked) {
		return Refuse(ReasonUnauthenticated, "the token is unknown or revoked")
	}
	return err
}

// counted is the count of a message's write, which the write itself performs
// (storage.MessageWrite.Count) so that on Postgres it costs no round trip of its own, with the
// check that the actor's token is still live: nil for a human, who is not rate-limited. Every
// check before the write has passed by then, so it is still the last one.
func (w *write) counted() *storage.WriteCount {
	if w.actor.Human {
		return nil
	}
	return &storage.WriteCount{Identity: w.actor.Identity, Token: w.actor.TokenID, Now: w.now, Limit: w.s.limits.WritesPerMinute}
}

// writer is whose write lock the reads before a counted write take ("" for a human).
func (w *write) writer() string {
	if w.actor.Human {
		return ""
	}
	return w.actor.Identity
}

// writeMessage stores the message with its count, and turns a count at the limit into the
// refusal rate_limited.
func (w *write) writeMessage(ctx context.Context, mw storage.MessageWrite) error {
	mw.Count = w.counted()
	err := w.f.WriteMessage(ctx, mw)
	if limited, ok := errors.AsType[*storage.WriteLimited](err); ok {
		return w.rateLimited(limited.Free)
	}
	return revokedSinceVerified(err)
}

// rateLimited refuses a write whose identity has no write left until free.
func (w *write) rateLimited(free time.Time) error {
	retry := max(1, int((free.Sub(w.now)+time.Second-1)/time.Second))
	e := Refuse(ReasonRateLimited, "more than %d writes in a minute by %s; retry after %d seconds", w.s.limits.WritesPerMinute, w.actor.Identity, retry)
	e.RetryAfter = retry
	return e
}

// open handles an ask that opens a new thread.
func (w *write) open(ctx context.Context) (*SendResult, error) {
	room, err := openingRoom(ctx, w.f, w.actor, w.env.Room)
	if err != nil {
		return nil, err
	}
	mark := MarkingOf(w.actor)
	t := &storage.Thread{
		Title:            Title(w.env.Body),
		State:            string(StateOpen),
		StateOrigin:      mark.Origin,
		StateConfirmedAt: &w.now, // a thread begins open; opening it is no marking to confirm
		ConfirmedState:   string(StateOpen),
		Creator:          w.actor.Identity,
		CreatorExtension: w.env.Extension,
		CreatedAt:        w.now,
		UpdatedAt:        w.now,
		RoomID:           room,
	}
	if err := w.f.OpenThread(ctx, t, w.writer()); err != nil {
		return nil, err
	}
	m := w.message(t.ID, nil)
	aw := &Awaiting{Except: &Party{Identity: w.actor.Identity, Extension: w.env.Extension}}
	setAwaiting(m, t, aw)
	ev := w.event(t, m, nil, StateOpen, Marking{Origin: mark.Origin, Confirmed: true})
	t.MessageCount = 1
	err = w.writeMessage(ctx, storage.MessageWrite{
		Message: m, Event: ev, Thread: t,
		Opens: true, AwaitedBySelf: awaitedBySelf(m), MoveInbox: true,
	})
	if err != nil {
		return nil, err
	}
	return &SendResult{Message: messageView(m), Thread: threadViewFor(t, w.actor)}, nil
}

// reply handles every envelope that goes into an existing thread.
func (w *write) reply(ctx context.Context) (*SendResult, error) {
	env := w.env
	var parent *storage.Message
	var t *storage.Thread
	var err error
	if env.Parent != 0 {
		// § 2: without a thread, the thread is the parent's.
		parent, t, err = w.f.ParentAndThreadForUpdate(ctx, env.Parent, env.Thread, w.writer())
		if parent == nil {
			return nil, notFound(err, "message %s not found", MessageKey(env.Parent))
		}
		if t == nil {
			threadID := env.Thread
			if threadID == 0 {
				threadID = parent.ThreadID
			}
			return nil, notFound(err, "thread %s not found", ThreadKey(threadID))
		}
	} else if t, err = w.f.ThreadForWrite(ctx, env.Thread, w.writer()); err != nil {
		return nil, notFound(err, "thread %s not found", ThreadKey(env.Thread))
	}
	if parent != nil && parent.ThreadID != t.ID {
		return nil, Refuse(ReasonNotFound, "message %s not found in thread %s", MessageKey(parent.ID), ThreadKey(t.ID))
	}
	if parent == nil {
		if parent, err = w.f.Message(ctx, defaultParent(env.Kind, t)); err != nil {
			return nil, err
		}
	}

	facts := ThreadFacts{State: State(t.State), Locked: isLocked(t), Creator: t.Creator}
	if facts.Locked && env.Kind != KindReopen {
		return nil, Refuse(ReasonThreadClosed, "thread %s is closed and confirmed; only reopen is accepted", ThreadKey(t.ID))
	}
	if err := CheckAuthority(w.actor, facts, env.Kind); err != nil {
		return nil, err
	}
	if err := CheckSelfReply(w.actor, env.Extension, env.Kind, parent.Identity, parent.Extension); err != nil {
		return nil, err
	}
	next, refusal := Next(facts.State, facts.Locked, env.Kind, w.actor.Human)
	if refusal != nil {
		return nil, refusal
	}
	if t.MessageCount >= w.s.limits.ThreadMaxMessages {
		return nil, Refuse(ReasonLimitExceeded, "thread %s has reached thread_max_messages (%d)", ThreadKey(t.ID), w.s.limits.ThreadMaxMessages)
	}
	if parent.Depth+1 > w.s.limits.ThreadMaxDepth {
		return nil, Refuse(ReasonLimitExceeded, "a reply to %s would be deeper than thread_max_depth (%d)", MessageKey(parent.ID), w.s.limits.ThreadMaxDepth)
	}
	// The last check, writes_per_minute, is the write's own (writeMessage).

	before := *t
	m := w.message(t.ID, parent)
	aw, err := w.awaitingAfter(ctx, t, parent)
	if err != nil {
		return nil, err
	}
	setAwaiting(m, t, aw)
	ev := w.applyState(t, m, next)
	t.MessageCount++
	t.UpdatedAt = w.now
	// A message that sets the awaiting itself gives the thread an awaiting_set_by it never
	// had: that always moves the thread in the inbox.
	self := awaitedBySelf(m)
	err = w.writeMessage(ctx, storage.MessageWrite{
		Message: m, Event: ev, Thread: t,
		AwaitedBySelf: self, MoveInbox: self || inboxMoved(&before, t),
	})
	if err != nil {
		return nil, err
	}
	return &SendResult{Message: messageView(m), Thread: threadViewFor(t, w.actor)}, nil
}

// defaultParent is § 3's column "default parent".
func defaultParent(kind Kind, t *storage.Thread) int64 {
	if info, _ := kindInfo(kind); info.DefaultParent == ParentAwaited && t.AwaitingSetBy != nil {
		return *t.AwaitingSetBy
	}
	return *t.RootMessageID
}

// awaitingAfter is § 3's column "awaiting after it". SetBy 0 stands for the new message
// itself, whose id the insert gives.
func (w *write) awaitingAfter(ctx context.Context, t *storage.Thread, parent *storage.Message) (*Awaiting, error) {
	self := &Party{Identity: w.actor.Identity, Extension: w.env.Extension}
	switch w.env.Kind {
	case KindAsk:
		if w.env.Parent != 0 {
			return &Awaiting{To: &Party{Identity: parent.Identity, Extension: parent.Extension}}, nil
		}
		return &Awaiting{Except: self}, nil
	case KindAnswer:
		ask := parent
		if Kind(parent.Kind) != KindAsk && parent.AskID != nil {
			var err error
			if ask, err = w.f.Message(ctx, *parent.AskID); err != nil {
				return nil, err
			}
		}
		return &Awaiting{To: &Party{Identity: ask.Identity, Extension: ask.Extension}}, nil
	case KindNote:
		return awaitingOf(t.AwaitingMode, t.AwaitingIdentity, t.AwaitingExtension, t.AwaitingSetBy), nil
	case KindReopen:
		return &Awaiting{Except: self}, nil
	default:
		return nil, nil
	}
}

// applyState moves the thread to next (§ 4, § 5) and returns the event to write when the
// state or its confirmation changes. An act that leaves both as they are writes no event
// (nil). The event's and the thread's references to each other and to m are set when they
// are stored (storage.Forum.WriteMessage).
func (w *write) applyState(t *storage.Thread, m *storage.Message, next State) *storage.Event {
	from := State(t.State)
	mark := MarkingOf(w.actor)
	changed := next != from
	// A moderator's decide or close on its own, still proposed state confirms it.
	confirms := !changed && mark.Confirmed && t.StateConfirmedAt == nil &&
		w.env.Kind.NeedsThreadAuthority() && w.env.Kind.Target() == from
	if !changed && !confirms {
		return nil
	}
	ev := w.event(t, m, &from, next, mark)
	setState(t, next, mark, ev, w.now)
	return ev
}

// setState records a new state on the thread (§ 5): confirmed states become confirmed_state.
func setState(t *storage.Thread, next State, mark Marking, ev *storage.Event, now time.Time) {
	t.State = string(next)
	t.StateOrigin = mark.Origin
	t.StateEventID = &ev.ID
	if mark.Confirmed {
		t.StateConfirmedAt = &now
		t.ConfirmedState = string(next)
	} else {
		t.StateConfirmedAt = nil
	}
	t.InboxTo = inboxTo(t)
}

func (w *write) message(threadID int64, parent *storage.Message) *storage.Message {
	m := &storage.Message{
		ThreadID:         threadID,
		Kind:             string(w.env.Kind),
		Identity:         w.actor.Identity,
		Extension:        w.env.Extension,
		AuthorKind:       w.actor.AuthorKind(),
		Body:             w.env.Body,
		ProvenanceModel:  w.env.Provenance.Model,
		ProvenanceClient: w.env.Provenance.Client,
		CreatedAt:        w.now,
	}
	if parent != nil {
		m.ParentID = &parent.ID
		m.Depth = parent.Depth + 1
		if Kind(parent.Kind) == KindAsk {
			m.AskID = &parent.ID
		} else {
			m.AskID = parent.AskID
		}
	}
	return m
}

func (w *write) event(t *storage.Thread, m *storage.Message, from *State, to State, mark Marking) *storage.Event {
	ev := &storage.Event{
		ThreadID:       t.ID,
		Subject:        ThreadKey(t.ID),
		Act:            string(w.env.Kind),
		ToState:        string(to),
		Origin:         mark.Origin,
		ActorIdentity:  w.actor.Identity,
		ActorExtension: w.env.Extension,
		Label:          w.actor.DisplayLabel(),
		MessageID:      &m.ID,
		Confirmed:      mark.Confirmed,
		At:             w.now,
	}
	if from != nil {
		s := string(*from)
		ev.FromState = &s
	}
	if mark.Confirmed {
		ev.ConfirmedAt = &w.now
	}
	return ev
}

// setAwaiting gives the message and its thread the same awaiting: the thread's is that of
// its last message. A SetBy of 0 (the new message itself) is stored on the message as NULL
// and on the thread once the message has its id (setBySelf).
func setAwaiting(m *storage.Message, t *storage.Thread, aw *Awaiting) {
	mode, identity, extension, setBy := storage.AwaitingNone, "", "", (*int64)(nil)
	if aw != nil {
		if aw.SetBy != 0 {
			id := aw.SetBy
			setBy = &id
		}
		if aw.To != nil {
			mode, identity, extension = storage.AwaitingTo, aw.To.Identity, aw.To.Extension
		} else {
			mode, identity, extension = storage.AwaitingAny, aw.Except.Identity, aw.Except.Extension
		}
	}
	m.AwaitingMode, m.AwaitingIdentity, m.AwaitingExtension, m.AwaitingSetBy = mode, identity, extension, setBy
	t.AwaitingMode, t.AwaitingIdentity, t.AwaitingExtension, t.AwaitingSetBy = mode, identity, extension, setBy
	t.InboxTo = inboxTo(t)
}

// setBySelf points the thread's awaiting at the new message when that message set it.
func setBySelf(t *storage.Thread, m *storage.Message) {
	if awaitedBySelf(m) {
		id := m.ID
		t.AwaitingSetBy = &id
	}
}

// awaitedBySelf reports whether the message sets the awaiting itself (SetBy 0, stored as NULL).
func awaitedBySelf(m *storage.Message) bool {
	return m.AwaitingMode != storage.AwaitingNone && m.AwaitingSetBy == nil
}

// inboxTo is whose inbox lists the thread (§ 7): the awaited identity, anyone, or nobody when
// nothing is awaited or the thread is confirmed closed or in a side state.
func inboxTo(t *storage.Thread) *string {
	if t.AwaitingMode == storage.AwaitingNone || isLocked(t) || State(t.State).IsSide() {
		return nil
	}
	to := storage.InboxAny
	if t.AwaitingMode == storage.AwaitingTo {
		to = t.AwaitingIdentity
	}
	return &to
}

// inboxMoved reports whether the change must reach inbox readers that hold an older cursor.
func inboxMoved(before, after *storage.Thread) bool {
	return before.AwaitingMode != after.AwaitingMode ||
		before.AwaitingIdentity != after.AwaitingIdentity ||
		before.AwaitingExtension != after.AwaitingExtension ||
		!sameID(before.AwaitingSetBy, after.AwaitingSetBy) ||
		!sameString(before.InboxTo, after.InboxTo)
}

func sameID(a, b *int64) bool { return (a == nil) == (b == nil) && (a == nil || *a == *b) }
func sameString(a, b *string) bool {
	return (a == nil) == (b == nil) && (a == nil || *a == *b)
}

// notFound turns storage.ErrNotFound into a not_found refusal.
func notFound(err error, format string, args ...any) error {
	if errors.Is(err, storage.ErrNotFound) {
		return Refuse(ReasonNotFound, format, args...)
	}
	return err
}
