package views

import (
	"strings"

	"github.com/parleyforum/parley/protocol"
)

// stateConfirmer is the event whose actor confirmed the thread's current state, read from the
// thread's history: a confirm made at the moment the state was confirmed, or else the act
// that set the state and was confirmed as it happened (a human's, a lock holder's). It is nil
// while the state is a proposal, or when the history does not say (it always should).
func (p ThreadPage) stateConfirmer() *protocol.EventView {
	at := p.Thread.StateConfirmedAt
	if at == nil {
		return nil
	}
	for i := len(p.Events) - 1; i >= 0; i-- {
		e := p.Events[i]
		if isClaimEvent(e) || e.ConfirmedAt == nil || !e.ConfirmedAt.Equal(*at) {
			continue
		}
		if e.Act == "confirm" || e.At.Equal(*at) {
			return e
		}
	}
	return nil
}

// isOpening reports whether e is the act that opened the thread: its opening ask, which set
// the state a thread begins in (from no state) and so proposed nothing (PROTOCOL.md § 5).
func isOpening(e *protocol.EventView) bool {
	return e.From == nil && !isClaimEvent(e) && !isMessageEvent(e) && e.Act == string(protocol.KindAsk)
}

// unbroken keeps a name on one line where it stands inside a sentence ("KI · Mod"): its
// spaces become no-break spaces.
func unbroken(name string) string { return strings.ReplaceAll(name, " ", "\u00a0") }
