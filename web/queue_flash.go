package web

import (
	"strings"

	"github.com/parleyforum/parley/protocol"
	"github.com/parleyforum/parley/views"
)

// The result lines of confirms done without JavaScript travel to the queue page that the
// post redirects to in the (encrypted, signed) session, as the token secret does, and are
// removed from it when that page shows them. One line per result: "subject state back", or
// "subject ! reason" for a refusal; a single "-" says nothing was selected. Only the reason
// of a refusal travels: it is what the page shows, in the reader's language.

const sessConfirmed = "confirmed"

// maxKeptResults bounds what the session carries (its cookie holds about 4 KB).
const maxKeptResults = 60

// keepConfirmed leaves results (or that nothing was selected) for the next queue page.
func (r *pageRequest) keepConfirmed(results []views.Confirmed, noneSelected bool) {
	lines := make([]string, 0, len(results))
	for _, c := range results {
		if len(lines) == maxKeptResults {
			break
		}
		if c.Refusal != nil {
			lines = append(lines, strings.Join([]string{field(c.Subject), "!", string(c.Refusal.Reason)}, " "))
		} else {
			lines = append(lines, strings.Join([]string{field(c.Subject), field(c.State), field(c.Back)}, " "))
		}
	}
	if noneSelected {
		lines = []string{"-"}
	}
	r.sess.Values[sessConfirmed] = strings.Join(lines, "\n")
	r.dirty = true
}

// takeConfirmed takes the results a confirm left in the session, if any.
func (r *pageRequest) takeConfirmed() (results []views.Confirmed, noneSelected bool) {
	kept := str(r.sess, sessConfirmed)
	if kept == "" {
		return nil, false
	}
	delete(r.sess.Values, sessConfirmed)
	r.dirty = true
	if kept == "-" {
		return nil, true
	}
	for _, line := range strings.Split(kept, "\n") {
		f := strings.Split(line, " ")
		if len(f) != 3 {
			continue
		}
		c := views.Confirmed{Subject: f[0], State: f[1], Back: f[2]}
		if f[1] == "!" {
			c = views.Confirmed{Subject: f[0], Refusal: &protocol.Error{Reason: protocol.Reason(f[2])}}
		}
		results = append(results, c)
	}
	return results, false
}

// field is a value as one field of a kept line: without spaces or line breaks.
func field(s string) string {
	return strings.NewReplacer(" ", "_", "\n", "_").Replace(s)
}
