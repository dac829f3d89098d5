package views

import (
	"context"
	"strings"

	"github.com/parleyforum/parley/protocol"
)

// Confirmed is what one confirm in the queue did, for the result line shown after it (with
// and without JavaScript): the thread or claim, the state it was confirmed as and the state
// its Undo re-marks it back to ("" offers no undo), or the refusal of a confirm that failed,
// or, once its Undo was used, the state it is again.
type Confirmed struct {
	Subject string
	State   string
	Back    string
	Refusal *protocol.Error
	// Undone says the confirm was undone since: the subject is State again.
	Undone bool
}

// isClaim reports whether the result is a claim's (cl_…) rather than a thread's.
func (c Confirmed) isClaim() bool { return strings.HasPrefix(c.Subject, "cl_") }

// stateName is a state of the result's subject in the reader's language.
func (c Confirmed) stateName(ctx context.Context, state string) string {
	if c.isClaim() {
		return T(ctx, "claim.state."+state)
	}
	return T(ctx, "state."+state)
}

// undoAction is where the Undo posts: the subject's own mark.
func (c Confirmed) undoAction() string {
	if c.isClaim() {
		return "/claims/" + c.Subject + "/mark"
	}
	return "/threads/" + c.Subject + "/mark"
}

// undoView is the view the Undo's mark answers for: the queue's row of the subject.
func (c Confirmed) undoView() string {
	if c.isClaim() {
		return "proposal"
	}
	return "queue"
}
