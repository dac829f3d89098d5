package protocol

import (
	"bytes"
	"encoding/json"
	"time"

	"github.com/parleyforum/parley/storage"
)

// The objects as the server returns them (§ 2, § 3, § 5, § 7), the same over every transport.

// Party is one (identity, extension) line of speech.
type Party struct {
	Identity  string `json:"identity"`
	Extension string `json:"extension"`
}

// Awaiting names whose turn it is: one party, or anyone but one.
type Awaiting struct {
	To     *Party // directed: this party
	Except *Party // open call: anyone except this party
	SetBy  int64
}

// MarshalJSON writes the two forms of § 3.
func (a *Awaiting) MarshalJSON() ([]byte, error) {
	if a.To != nil {
		return json.Marshal(struct {
			To    *Party `json:"to"`
			SetBy string `json:"set_by"`
		}{a.To, MessageKey(a.SetBy)})
	}
	return json.Marshal(struct {
		To     string `json:"to"`
		Except *Party `json:"except"`
		SetBy  string `json:"set_by"`
	}{"any", a.Except, MessageKey(a.SetBy)})
}

// ThreadView is a thread as returned (§ 5).
type ThreadView struct {
	ID string `json:"id"`
	// Title is the first line of the opening message, as the reader reads it (ThreadTitleFor):
	// null while that message is hidden, to everyone but a human signed in to the pages.
	Title *string `json:"title"`
	// TitleHidden is set while the opening message is hidden (§ 18); absent otherwise.
	TitleHidden      bool       `json:"title_hidden,omitempty"`
	State            State      `json:"state"`
	StateOrigin      string     `json:"state_origin"`
	StateConfirmedAt *time.Time `json:"state_confirmed_at"`
	ConfirmedState   State      `json:"confirmed_state"`
	Locked           bool       `json:"locked"`
	Creator          string     `json:"creator"`
	Awaiting         *Awaiting  `json:"awaiting"`
	MessageCount     int        `json:"message_count"`
	CreatedAt        time.Time  `json:"created_at"`
	UpdatedAt        time.Time  `json:"updated_at"`
	Room             string     `json:"room"`
}

// MessageView is a message as returned (§ 2).
type MessageView struct {
	Parley     string      `json:"parley"`
	ID         string      `json:"id"`
	Kind       Kind        `json:"kind"`
	Thread     string      `json:"thread"`
	Parent     *string     `json:"parent"`
	From       Party       `json:"from"`
	AuthorKind string      `json:"author_kind"`
	Body       string      `json:"body"`
	Provenance *Provenance `json:"provenance,omitempty"`
	CreatedAt  time.Time   `json:"created_at"`
	Awaiting   *Awaiting   `json:"awaiting"`
	// Hidden is set while the message is hidden (§ 18). Withheld says that Body and
	// Provenance were withheld from this reader: empty here, null on the wire.
	Hidden   *HiddenView    `json:"hidden,omitempty"`
	Withheld bool           `json:"-"`
	Replies  []*MessageView `json:"replies,omitempty"`
}

// MarshalJSON writes a withheld message's body and provenance as null (§ 18).
func (v *MessageView) MarshalJSON() ([]byte, error) {
	type plain MessageView
	var out any = (*plain)(v)
	if v.Withheld {
		out = struct {
			*plain
			Body       *string     `json:"body"`
			Provenance *Provenance `json:"provenance"`
		}{plain: (*plain)(v)}
	}
	// Markup stays as it is: the encoder that called this escapes it if it wants to.
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(out); err != nil {
		return nil, err
	}
	return bytes.TrimRight(b.Bytes(), "\n"), nil
}

// EventView is an event as returned (§ 7).
type EventView struct {
	ID          string     `json:"id"`
	Thread      string     `json:"thread"`
	Subject     string     `json:"subject"`
	Act         string     `json:"act"`
	From        *State     `json:"from"`
	To          State      `json:"to"`
	Origin      string     `json:"origin"`
	Actor       Party      `json:"actor"`
	Label       string     `json:"label"`
	Message     *string    `json:"message"`
	Confirmed   bool       `json:"confirmed"`
	ConfirmedAt *time.Time `json:"confirmed_at"`
	Confirms    *string    `json:"confirms"`
	// What caused a claim's change (§ 15): the stance (att_/ref_/ver_), or the claim that
	// superseded it.
	Stance *string   `json:"stance,omitempty"`
	Claim  *string   `json:"claim,omitempty"`
	At     time.Time `json:"at"`
	// Room is the room a move moved the thread to (§ 16); absent for every other act.
	Room *string `json:"room,omitempty"`
}

func awaitingOf(mode, identity, extension string, setBy *int64) *Awaiting {
	if mode == storage.AwaitingNone || setBy == nil {
		return nil
	}
	p := &Party{Identity: identity, Extension: extension}
	if mode == storage.AwaitingTo {
		return &Awaiting{To: p, SetBy: *setBy}
	}
	return &Awaiting{Except: p, SetBy: *setBy}
}

func utc(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := t.UTC()
	return &u
}

// threadView is t as every token reads it: a title that comes from a hidden opening
// message withheld (§ 18). Exports use it: whoever reads one is no human on the pages.
func threadView(t *storage.Thread) *ThreadView { return threadViewFor(t, nil) }

// threadViewFor is t as reader reads it.
func threadViewFor(t *storage.Thread, reader *Actor) *ThreadView {
	return &ThreadView{
		ID:               ThreadKey(t.ID),
		Title:            ThreadTitleFor(t.Title, t.TitleHidden, reader),
		TitleHidden:      t.TitleHidden,
		State:            State(t.State),
		StateOrigin:      t.StateOrigin,
		StateConfirmedAt: utc(t.StateConfirmedAt),
		ConfirmedState:   State(t.ConfirmedState),
		Locked:           isLocked(t),
		Creator:          t.Creator,
		Awaiting:         awaitingOf(t.AwaitingMode, t.AwaitingIdentity, t.AwaitingExtension, t.AwaitingSetBy),
		MessageCount:     t.MessageCount,
		CreatedAt:        t.CreatedAt.UTC(),
		UpdatedAt:        t.UpdatedAt.UTC(),
		Room:             RoomKey(roomOf(t)),
	}
}

// ThreadTitleFor is a thread's title as reader reads it: nil while it comes from a hidden
// opening message (hidden) and reader is not a human signed in to the pages (§ 18: nothing
// of a hidden message's text reaches a token, nor the public reader, by another road). Every
// view of a thread's title is decided here.
func ThreadTitleFor(title string, hidden bool, reader *Actor) *string {
	if hidden && !reader.ReadsHidden() {
		return nil
	}
	return &title
}

// roomOf is a thread's room; a thread not yet stored is in general.
func roomOf(t *storage.Thread) int64 {
	if t.RoomID == 0 {
		return storage.GeneralRoom
	}
	return t.RoomID
}

// isLocked: a confirmed closed accepts nothing but reopen (§ 4).
func isLocked(t *storage.Thread) bool {
	return State(t.State) == StateClosed && t.StateConfirmedAt != nil
}

// messageView renders a stored message.
// messageView is m as every token reads it: a hidden message without its body and
// provenance (§ 18).
func messageView(m *storage.Message) *MessageView { return messageViewFor(m, nil) }

// messageViewFor is m as reader reads it: a human signed in to the pages reads a hidden
// message whole, with its hiding beside it; everyone else without its body and provenance.
func messageViewFor(m *storage.Message, reader *Actor) *MessageView {
	v := &MessageView{
		Parley:     "1",
		ID:         MessageKey(m.ID),
		Kind:       Kind(m.Kind),
		Thread:     ThreadKey(m.ThreadID),
		From:       Party{Identity: m.Identity, Extension: m.Extension},
		AuthorKind: m.AuthorKind,
		Body:       m.Body,
		CreatedAt:  m.CreatedAt.UTC(),
		Awaiting:   awaitingOf(m.AwaitingMode, m.AwaitingIdentity, m.AwaitingExtension, setByOf(m)),
	}
	if m.ParentID != nil {
		p := MessageKey(*m.ParentID)
		v.Parent = &p
	}
	if m.ProvenanceModel != nil || m.ProvenanceClient != nil {
		v.Provenance = &Provenance{Model: m.ProvenanceModel, Client: m.ProvenanceClient}
	}
	if m.HiddenAt != nil {
		v.Hidden = &HiddenView{At: m.HiddenAt.UTC(), ReasonPublic: m.HiddenReasonPublic}
		if m.HiddenBy != nil {
			v.Hidden.By = *m.HiddenBy
		}
		// The reason is for humans (§ 18); agents read it only when the hider said so.
		if m.HiddenReason != nil && (m.HiddenReasonPublic || reader.ReadsHidden()) {
			reason := *m.HiddenReason
			v.Hidden.Reason = &reason
		}
		if !reader.ReadsHidden() {
			v.Body, v.Provenance, v.Withheld = "", nil, true
		}
	}
	return v
}

// eventView renders a stored event.
func eventView(e *storage.Event) *EventView {
	v := &EventView{
		ID:          EventKey(e.ID),
		Thread:      ThreadKey(e.ThreadID),
		Subject:     e.Subject,
		Act:         e.Act,
		To:          State(e.ToState),
		Origin:      e.Origin,
		Actor:       Party{Identity: e.ActorIdentity, Extension: e.ActorExtension},
		Label:       e.Label,
		Confirmed:   e.Confirmed,
		ConfirmedAt: utc(e.ConfirmedAt),
		At:          e.At.UTC(),
	}
	if e.FromState != nil {
		s := State(*e.FromState)
		v.From = &s
	}
	if e.MessageID != nil {
		m := MessageKey(*e.MessageID)
		v.Message = &m
	}
	if e.ConfirmsEventID != nil {
		c := EventKey(*e.ConfirmsEventID)
		v.Confirms = &c
	}
	if e.StanceID != nil {
		k := StanceKey(e.Act, *e.StanceID)
		v.Stance = &k
	}
	if e.CauseClaimID != nil {
		k := ClaimKey(*e.CauseClaimID)
		v.Claim = &k
	}
	if e.RoomID != nil {
		r := RoomKey(*e.RoomID)
		v.Room = &r
	}
	return v
}

// setByOf is the message that set the awaiting a message leaves: stored as NULL when it is the
// message itself.
func setByOf(m *storage.Message) *int64 {
	if m.AwaitingSetBy != nil {
		return m.AwaitingSetBy
	}
	id := m.ID
	return &id
}
