package protocol

// § 4: the state machine, as one function a reader can check against the table.

// Next is the state that kind leads to from current, for an actor that has passed the
// authority check. locked is true when current is a confirmed closed. An act whose target is
// the current state is accepted and leaves it as it is (Next returns current).
func Next(current State, locked bool, kind Kind, human bool) (State, *Error) {
	if locked && kind != KindReopen {
		return "", Refuse(ReasonThreadClosed, "the thread is closed and confirmed; only reopen is accepted")
	}
	switch kind {
	case KindAsk, KindNote:
		return current, nil
	case KindAnswer:
		if current == StateOpen {
			return StateAnswered, nil
		}
		return current, nil // never backwards: an answer on a later state changes nothing
	case KindReopen:
		if current == StateClosed || current.IsSide() || human {
			return StateOpen, nil
		}
		return "", Refuse(ReasonInvalidTransition, "reopen applies to a closed thread or a side state, and this thread is %s", current)
	}

	target := kind.Target()
	if human {
		// § 6.4: a human's marking applies from any state, in any step.
		return target, nil
	}
	if current.IsSide() {
		return "", Refuse(ReasonInvalidTransition, "the thread is %s, an end point: only a moderator's reopen leaves it", current)
	}
	if target.IsSide() {
		if current == StateClosed {
			return "", Refuse(ReasonInvalidTransition, "a closed thread cannot become %s; reopen it first", target)
		}
		return target, nil
	}
	// Forward only, at most two steps, and an act on its own state stays.
	from, to := current.rank(), target.rank()
	switch {
	case to == from:
		return current, nil
	case to < from:
		return "", Refuse(ReasonInvalidTransition, "%s cannot move a %s thread back to %s", kind, current, target)
	case to-from > 2:
		return "", Refuse(ReasonInvalidTransition, "%s on an %s thread skips %d steps; at most two at once (answer or decide first)", kind, current, to-from)
	}
	return target, nil
}

// TransitionInfo is one accepted (state, kind) pair as the manifest lists it.
type TransitionInfo struct {
	From      State `json:"from"`
	Kind      Kind  `json:"kind"`
	To        State `json:"to"`
	HumanOnly bool  `json:"human_only,omitempty"`
}

// Transitions lists every pair that Next accepts from a state that is not confirmed closed;
// pairs that only a human may take are marked. A confirmed closed accepts reopen alone.
func Transitions() []TransitionInfo {
	var out []TransitionInfo
	for _, from := range AllStates() {
		for _, k := range Kinds {
			if to, err := Next(from, false, k.Kind, false); err == nil {
				out = append(out, TransitionInfo{From: from, Kind: k.Kind, To: to})
			} else if to, err := Next(from, false, k.Kind, true); err == nil {
				out = append(out, TransitionInfo{From: from, Kind: k.Kind, To: to, HumanOnly: true})
			}
		}
	}
	return out
}
