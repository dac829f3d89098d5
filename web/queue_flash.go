package web

import (
	"strings"

	"github.com/parleyforum/parley/protocol"
	"github.com/parleyforum/parley/views"
)

// The result lines of confirms done without JavaScript travel to the queue page that the
// post redirects to in the (encrypted, signed) session, as the token secret does, and are
// taken from it when that page shows them. One line per result: "subject state back",
// "subject ! reason" for a refusal, "subject ~ state" for a confirm undone (re-marked back
// to state); a single "-" says nothing was selected. Only the reason of a refusal travels:
// it is what the page shows, in the reader's language.
//
// The lines a page showed stay in the session (sessShown) until other lines replace them, for
// the Undo of one of them: without JavaScript it is a post and a new page, which shows the
// same lines again with that one undone — the others keep their Undo.

const (
	sessConfirmed = "confirmed"
	sessShown     = "confirmed_shown"
)

// maxKeptResults bounds what the session carries (its cookie holds about 4 KB).
const maxKeptResults = 60

// keepConfirmed leaves results (or that nothing was selected) for the next queue page.
func (r *pageRequest) keepConfirmed(results []views.Confirmed, noneSelected bool) {
	lines := make([]string, 0, len(results))
	for _, c := range results {
		if len(lines) == maxKeptResults {
			break
		}
		switch {
		case c.Refusal != nil:
			lines = append(lines, strings.Join([]string{field(c.Subject), "!", string(c.Refusal.Reason)}, " "))
		case c.Undone:
			lines = append(lines, strings.Join([]string{field(c.Subject), "~", field(c.State)}, " "))
		default:
			lines = append(lines, strings.Join([]string{field(c.Subject), field(c.State), field(c.Back)}, " "))
		}
	}
	if noneSelected {
		lines = []string{"-"}
	}
	r.sess.Values[sessConfirmed] = strings.Join(lines, "\n")
	r.dirty = true
}

// keepUndone leaves for the next queue page the result lines the last one showed, with
// subject's now undone — re-marked back to state — or, when that page showed none of it
// (another tab's Undo), that line alone.
func (r *pageRequest) keepUndone(subject, state string) {
	results, _ := parseKept(str(r.sess, sessShown))
	undone := views.Confirmed{Subject: subject, State: state, Undone: true}
	found := false
	for i, c := range results {
		if c.Subject == subject && c.Refusal == nil {
			results[i], found = undone, true
		}
	}
	if !found {
		results = []views.Confirmed{undone}
	}
	r.keepConfirmed(results, false)
}

// takeConfirmed takes the results a confirm left in the session, if any.
func (r *pageRequest) takeConfirmed() (results []views.Confirmed, noneSelected bool) {
	kept := str(r.sess, sessConfirmed)
	if kept == "" {
		return nil, false
	}
	delete(r.sess.Values, sessConfirmed)
	r.sess.Values[sessShown] = kept
	r.dirty = true
	return parseKept(kept)
}

// parseKept reads kept result lines.
func parseKept(kept string) (results []views.Confirmed, noneSelected bool) {
	if kept == "-" {
		return nil, true
	}
	for _, line := range strings.Split(kept, "\n") {
		f := strings.Split(line, " ")
		if len(f) != 3 {
			continue
		}
		c := views.Confirmed{Subject: f[0], State: f[1], Back: f[2]}
		switch f[1] {
		case "!":
			c = views.Confirmed{Subject: f[0], Refusal: &protocol.Error{Reason: protocol.Reason(f[2])}}
		case "~":
			c = views.Confirmed{Subject: f[0], State: f[2], Undone: true}
		}
		results = append(results, c)
	}
	return results, false
}

// field is a value as one field of a kept line: without spaces or line breaks.
func field(s string) string {
	return strings.NewReplacer(" ", "_", "\n", "_").Replace(s)
}
