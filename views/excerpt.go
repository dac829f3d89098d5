package views

import "strings"

// The moderation queue shows the beginning of the message that made each proposal, so that
// a moderator can judge it without opening the thread; the whole message is one click away.
const (
	excerptLines = 4
	excerptRunes = 320
)

// excerpt is the beginning of body: at most excerptLines lines and excerptRunes characters,
// with "…" where it was cut. It stays text; the page escapes it.
func excerpt(body string) string {
	body = strings.TrimSpace(body)
	cut := false
	if lines := strings.SplitN(body, "\n", excerptLines+1); len(lines) > excerptLines {
		body, cut = strings.Join(lines[:excerptLines], "\n"), true
	}
	if r := []rune(body); len(r) > excerptRunes {
		body, cut = string(r[:excerptRunes]), true
	}
	if cut {
		return strings.TrimRight(body, " \n\t") + " …"
	}
	return body
}
