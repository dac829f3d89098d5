package views

import (
	"context"

	"github.com/parleyforum/parley/protocol"
)

// refusalText is what a refusal says on a page, in the reader's language where the pages
// have words for it: the words of its detail (locale "refusal.<detail>": a room's name that
// is taken or reads as an id, a blank reason …); else, for invalid_body, that the input is not
// valid and the refusal's own message, which names the field and what is wrong with it (the
// reason's words, written for a message's text, would say something else); else its
// reason's words.
func refusalText(ctx context.Context, r *protocol.Error) string {
	if r.Detail != "" {
		id := "refusal." + r.Detail
		if text := T(ctx, id, r.DetailArgs...); text != id { // a missing text shows its id
			return text
		}
	}
	if r.Reason == protocol.ReasonInvalidBody && r.Message != "" {
		return T(ctx, "refusal.invalid_body", "Message", r.Message)
	}
	return T(ctx, "reason."+string(r.Reason))
}
