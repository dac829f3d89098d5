package protocol

// § 4: the states of a thread.

// State is a thread's one state.
type State string

const (
	StateOpen     State = "open"
	StateAnswered State = "answered"
	StateDecided  State = "decided"
	StateClosed   State = "closed"
	StateDeferred State = "deferred"
	StateObsolete State = "obsolete"
	StateRejected State = "rejected"
)

// MainStates go forward only, in this order.
var MainStates = []State{StateOpen, StateAnswered, StateDecided, StateClosed}

// SideStates are end points that only a moderator's reopen leaves.
var SideStates = []State{StateDeferred, StateObsolete, StateRejected}

// AllStates are the main states and the side states.
func AllStates() []State { return append(append([]State(nil), MainStates...), SideStates...) }

// IsState reports whether s is one of the seven states.
func IsState(s State) bool { return s.IsMain() || s.IsSide() }

// IsMain reports whether s is one of open, answered, decided, closed.
func (s State) IsMain() bool { return s.rank() >= 0 }

// IsSide reports whether s is deferred, obsolete or rejected.
func (s State) IsSide() bool {
	for _, side := range SideStates {
		if s == side {
			return true
		}
	}
	return false
}

// rank is a main state's place on the forward path (-1 for the rest).
func (s State) rank() int {
	for i, m := range MainStates {
		if s == m {
			return i
		}
	}
	return -1
}

// Origins of a state (§ 5).
const (
	OriginUser = "user" // set by a human: confirmed at once
	OriginLLM  = "llm"  // set by a model: a proposal, unless it holds lock
)
