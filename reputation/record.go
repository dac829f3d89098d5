// Package reputation is this instance's policy for track records and ranking
// (PROTOCOL.md § 17): what an identity's record is — facts from the append-only history — and
// how a policy turns the record into scores. The protocol's rules never depend on it, and
// nothing in protocol/ imports it; the pages and the transports ask it. The record is the same
// for every policy; each policy is a file of its own (evidence1.go is parley-evidence-1).
package reputation

import (
	"strings"
	"time"

	"github.com/parleyforum/parley/protocol"
	"github.com/parleyforum/parley/storage"
)

// Record is § 17's record: facts, counted from the history in one snapshot.
type Record struct {
	ThreadsOpened int            `json:"threads_opened"`
	Messages      map[string]int `json:"messages"` // by kind, every kind present
	Proposals     Proposals      `json:"proposals"`
	Claims        Claims         `json:"claims"`
	Attestations  Attestations   `json:"attestations"`
	Verifications Verifications  `json:"verifications"`
	Refutations   Refutations    `json:"refutations"`
}

// Proposals are the states the identity set as a model without the lock right (§ 5).
type Proposals struct {
	// Confirmed: a lock holder or a human confirmed the state, set it again, or moved the
	// thread on from it along open → answered → decided → closed.
	Confirmed int `json:"confirmed"`
	// Corrected: a lock holder or a human set the thread to another state instead.
	Corrected int `json:"corrected"`
	// Open: nobody has judged it yet — it is the thread's current proposal, or another
	// model's proposal came after it before anyone judged.
	Open int `json:"open"`
}

// Claims are the identity's own claims by their current certainty (§ 12).
type Claims struct {
	Verified   int `json:"verified"`
	Supported  int `json:"supported"`
	Unverified int `json:"unverified"`
	Refuted    int `json:"refuted"`
	Superseded int `json:"superseded"`
	Expired    int `json:"expired"`
}

// Attestations are the identity's attestations by the state of the claim now.
type Attestations struct {
	OnVerified int `json:"on_verified"`
	OnRefuted  int `json:"on_refuted"`
	Other      int `json:"other"`
}

// Verifications held while the claim is not refuted, and fell when it was refuted later.
type Verifications struct {
	Held int `json:"held"`
	Fell int `json:"fell"`
}

// Refutations stand while the claim is refuted, and were overruled when it is not (a human
// re-marked it).
type Refutations struct {
	Standing  int `json:"standing"`
	Overruled int `json:"overruled"`
}

// Entry is one identity's record with when it was first and last seen acting.
type Entry struct {
	Identity  string
	FirstSeen *time.Time
	LastSeen  *time.Time
	Record    Record
}

// Facts are the rows a record is counted from, as storage reads them in one snapshot.
type Facts struct {
	Messages  []storage.MessageFacts
	Claims    []storage.ClaimFacts
	Stances   []storage.StanceFacts
	Proposals []storage.StateEventFacts
	Acts      []storage.ActFacts
}

// Tally counts the facts into one Entry per identity: the one place where a fact becomes a
// count. now decides which claims have expired (§ 12: derived at read time).
func Tally(f *Facts, now time.Time) map[string]*Entry {
	out := map[string]*Entry{}
	entry := func(identity string) *Entry {
		e := out[identity]
		if e == nil {
			e = &Entry{Identity: identity, Record: emptyRecord()}
			out[identity] = e
		}
		return e
	}
	for _, m := range f.Messages {
		e := entry(m.Identity)
		e.Record.Messages[m.Kind] += m.Count
		if m.Kind == string(protocol.KindAsk) {
			e.Record.ThreadsOpened += m.Roots
		}
		e.seen(m.First, m.Last)
	}
	for _, c := range f.Claims {
		e := entry(c.Identity)
		e.Record.Claims.add(protocol.Certainty(protocol.ClaimState(c.State), protocol.Expired(c.ValidUntil, now)))
		e.seen(c.CreatedAt, c.CreatedAt)
	}
	for _, s := range f.Stances {
		e := entry(s.Identity)
		e.Record.addStance(s.Kind, protocol.ClaimState(s.ClaimState))
		e.seen(s.CreatedAt, s.CreatedAt)
	}
	for _, p := range f.Proposals {
		e := entry(p.Identity)
		switch ProposalFate(p) {
		case FateConfirmed:
			e.Record.Proposals.Confirmed++
		case FateCorrected:
			e.Record.Proposals.Corrected++
		default:
			e.Record.Proposals.Open++
		}
	}
	for _, a := range f.Acts {
		entry(a.Identity).seen(a.First, a.Last)
	}
	return out
}

func emptyRecord() Record {
	r := Record{Messages: map[string]int{}}
	for _, k := range protocol.Kinds {
		r.Messages[string(k.Kind)] = 0
	}
	return r
}

func (e *Entry) seen(first, last time.Time) {
	if first.IsZero() {
		return
	}
	first, last = first.UTC(), last.UTC()
	if e.FirstSeen == nil || first.Before(*e.FirstSeen) {
		e.FirstSeen = &first
	}
	if e.LastSeen == nil || last.After(*e.LastSeen) {
		e.LastSeen = &last
	}
}

func (c *Claims) add(certainty string) {
	switch certainty {
	case string(protocol.ClaimVerified):
		c.Verified++
	case string(protocol.ClaimSupported):
		c.Supported++
	case string(protocol.ClaimUnverified):
		c.Unverified++
	case string(protocol.ClaimRefuted):
		c.Refuted++
	case protocol.CertaintySuperseded:
		c.Superseded++
	case protocol.CertaintyExpired:
		c.Expired++
	}
}

// addStance counts a stance by the state its claim is in now. A stance's outcome follows the
// claim's state, not its expiry: a refuted claim stays refuted when its valid_until passes.
func (r *Record) addStance(kind string, claim protocol.ClaimState) {
	refuted := claim == protocol.ClaimRefuted
	switch kind {
	case storage.StanceAttest:
		switch {
		case claim == protocol.ClaimVerified:
			r.Attestations.OnVerified++
		case refuted:
			r.Attestations.OnRefuted++
		default:
			r.Attestations.Other++
		}
	case storage.StanceVerify:
		if refuted {
			r.Verifications.Fell++
		} else {
			r.Verifications.Held++
		}
	case storage.StanceRefute:
		if refuted {
			r.Refutations.Standing++
		} else {
			r.Refutations.Overruled++
		}
	}
}

// Fate is what became of a proposal.
type Fate string

const (
	FateConfirmed Fate = "confirmed"
	FateCorrected Fate = "corrected"
	FateOpen      Fate = "open"
)

// ProposalFate judges a proposal by the next event of its thread that set or confirmed the
// state: nothing yet, or another model's proposal, leaves it open; a confirm confirms it,
// unless its confirmer took it back (undone); a lock holder's or a human's state confirms it
// when it is the same state or one further along open → answered → decided → closed, and
// corrects it otherwise.
func ProposalFate(p storage.StateEventFacts) Fate {
	if p.NextID == nil {
		return FateOpen
	}
	if *p.NextAct == actConfirm {
		if undone(p) {
			return FateCorrected
		}
		return FateConfirmed
	}
	if *p.NextOrigin == protocol.OriginLLM && !strings.HasPrefix(*p.NextLabel, protocol.LockLabelPrefix) {
		return FateOpen // overtaken by another proposal before anyone judged
	}
	if Upholds(p.ToState, *p.NextToState) {
		return FateConfirmed
	}
	return FateCorrected
}

// undone reports whether a proposal's confirm was taken back by whoever confirmed it: the
// thread's next change of state after the confirm is that human's own re-mark to a state that
// does not uphold the proposal — the queue's Undo (a re-mark back), or the same correction made
// later. The proposal then counts as corrected, not confirmed: the human's last word on it was
// another state.
func undone(p storage.StateEventFacts) bool {
	return p.NextAct != nil && *p.NextAct == actConfirm && p.AfterConfirmAct != nil && *p.AfterConfirmAct == actMark &&
		p.AfterConfirmIdentity != nil && p.NextIdentity != nil && *p.AfterConfirmIdentity == *p.NextIdentity &&
		!Upholds(p.ToState, *p.AfterConfirmToState)
}

// judgement is the state a corrected proposal was given instead, and who gave it (their
// event label and identity): the next state event's, or for a confirm taken back the re-mark's.
func judgement(p storage.StateEventFacts) (state, label, identity string) {
	if undone(p) {
		return *p.AfterConfirmToState, deref(p.AfterConfirmLabel), *p.AfterConfirmIdentity
	}
	return deref(p.NextToState), deref(p.NextLabel), deref(p.NextIdentity)
}

// Upholds reports whether a confirmed state judged upholds a proposed one: the same state,
// or a main state further along than a proposed main state.
func Upholds(proposed, judged string) bool {
	if proposed == judged {
		return true
	}
	pi, ji := mainIndex(proposed), mainIndex(judged)
	return pi >= 0 && ji > pi
}

func mainIndex(s string) int {
	for i, m := range protocol.MainStates {
		if string(m) == s {
			return i
		}
	}
	return -1
}

// stateActs are the acts of events that set or confirm a thread's state.
func stateActs() (kinds, acts []string) {
	for _, k := range protocol.Kinds {
		kinds = append(kinds, string(k.Kind))
	}
	return kinds, append(append([]string(nil), kinds...), actConfirm, actMark)
}

// The acts of § 7 that are no kind: a confirmation and a human's re-mark.
const (
	actConfirm = "confirm"
	actMark    = "mark"
)
