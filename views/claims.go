package views

import (
	"context"
	"strings"

	"github.com/parleyforum/parley/protocol"
)

// ClaimCard is one claim as its card shows it: the claim with everything said for and
// against it (its quorum, k of N verifiers, is the claim read's), its grounded label (in,
// out, undec), the previews of the artifacts it cites, on which page it stands (thread or
// queue), and a refused control's form, if any.
type ClaimCard struct {
	Claim     *protocol.ClaimView
	Grounded  string
	Artifacts ArtifactPreviews
	View      string
	Form      FormState
}

// claimsAt are the cards of the claims anchored in message, oldest first.
func (p ThreadPage) claimsAt(message string) []ClaimCard {
	var out []ClaimCard
	for _, c := range p.Claims {
		if c.Anchor == message {
			out = append(out, ClaimCard{Claim: c, Grounded: p.Grounded[c.ID], Artifacts: p.Artifacts, View: "thread", Form: p.Form})
		}
	}
	return out
}

// ClaimControlID names a claim's control: its action and the claim, prefixed in the queue's
// two lists (queue: awaiting a verifier; proposal: a model's proposal), so that the same
// claim's controls in several places of a page never share an id.
func ClaimControlID(action, claim, view string) string {
	if view == "queue" || view == "proposal" {
		return view + "-" + action + "-" + claim
	}
	return action + "-" + claim
}

// ClaimSwapTarget is what an htmx verify, confirm or mark replaces: the claim's card, or its
// row in one of the queue's lists.
func ClaimSwapTarget(claim, view string) string {
	if view == "queue" || view == "proposal" {
		return "#" + view + "-" + claim
	}
	return "#" + claim
}

// markHintID is the id of the hint beside a superseded claim's mark control, "" for any
// other claim (no hint, nothing described).
func markHintID(c ClaimCard) string {
	if c.Claim.SupersededBy == nil {
		return ""
	}
	return ClaimControlID("mark", c.Claim.ID, c.View) + "-hint"
}

// canVerify says whether a verify control is offered: on a supported claim that has not
// expired, the only one a seal can change (§ 12; the operation decides, this only spares a
// control that could only be refused).
func canVerify(c *protocol.ClaimView) bool {
	return c.State == protocol.ClaimSupported && !c.Expired
}

// markableClaimStates are the states a human may re-mark a claim with: every state but
// superseded, which only a newer claim gives.
func markableClaimStates() []protocol.ClaimState {
	var out []protocol.ClaimState
	for _, s := range protocol.ClaimStates {
		if s != protocol.ClaimSuperseded {
			out = append(out, s)
		}
	}
	return out
}

// claimMarkDefault is the state preselected in a claim's mark control: what was sent, else
// the current one. A superseded claim's current state is no choice (only a newer claim
// gives it), so its control starts on the empty, required choice: nothing is preselected
// that a single click would set.
func (c ClaimCard) claimMarkDefault() string {
	if c.Form.ID == ClaimControlID("mark", c.Claim.ID, c.View) && c.Form.State != "" {
		return c.Form.State
	}
	for _, s := range markableClaimStates() {
		if s == c.Claim.State {
			return string(s)
		}
	}
	return ""
}

// evidenceCode reports whether an evidence item's ref is a pointer to copy as it is (a hash,
// an artifact, a commit), shown as code.
func evidenceCode(e protocol.Evidence) bool {
	switch e.Kind {
	case "hash", "artifact", "commit":
		return true
	}
	return false
}

// evidenceURL reports whether an evidence item's ref is a link: an http(s) URL, which the
// operation layer checked when it was given.
func evidenceURL(e protocol.Evidence) bool {
	return e.Kind == "url" && (strings.HasPrefix(e.Ref, "https://") || strings.HasPrefix(e.Ref, "http://"))
}

// quorumText is a claim's verifications against its quorum, k of N, as the claim read says.
func quorumText(ctx context.Context, c *protocol.ClaimView) string {
	return T(ctx, "claim.verifications", "Verifiers", c.Quorum.Verifiers, "Of", c.Quorum.Of)
}

// artifactAlt is an image artifact's text alternative: the note that cites it, else its kind
// and ref.
func artifactAlt(ctx context.Context, e protocol.Evidence) string {
	if e.Note != nil && strings.TrimSpace(*e.Note) != "" {
		return *e.Note
	}
	return T(ctx, "artifact.image_of", "Ref", e.Ref)
}

// stanceText is what a stance says besides its proof: a refutation's body, else its note.
func stanceText(s *protocol.StanceView) string {
	switch {
	case s.Body != nil:
		return *s.Body
	case s.Note != nil:
		return *s.Note
	}
	return ""
}

// upper is a grounded label as researchers write it: IN, OUT, UNDEC.
func upper(label string) string { return strings.ToUpper(label) }

// isClaimEvent reports whether an event of the thread changed one of its claims.
func isClaimEvent(e *protocol.EventView) bool { return strings.HasPrefix(e.Subject, "cl_") }

// isMessageEvent reports whether e hid or unhid a message (PROTOCOL.md § 18).
func isMessageEvent(e *protocol.EventView) bool { return strings.HasPrefix(e.Subject, "msg_") }

// eventState names a state an event moved between: a claim's or the thread's.
func eventState(ctx context.Context, e *protocol.EventView, s protocol.State) string {
	if isClaimEvent(e) {
		return T(ctx, "claim.state."+string(s))
	}
	return T(ctx, "state."+string(s))
}
