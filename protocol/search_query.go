package protocol

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/parleyforum/parley/storage"
)

// § 13 Search: the query language, the same on every database. Words are runs of letters and
// digits, compared case-insensitively, as the index splits the bodies it stores; everything
// else in a term only separates words.
//
//	word      must occur
//	"a b"     the words must follow each other (a phrase)
//	-word     must not occur (also -"a phrase")
//	word*     a word that begins so (also "a phr"*)
//
// A bare term that holds several words ("e-mail", "v1.2") is the phrase of them, as the
// index stores it.

// searchQueryMaxChars bounds q.
const searchQueryMaxChars = 200

// parseSearchQuery reads q into terms, or refuses it: empty, too long, or with no word that
// must occur.
func parseSearchQuery(q string) ([]storage.SearchTerm, *Error) {
	if n := utf8.RuneCountInString(q); n == 0 || n > searchQueryMaxChars {
		return nil, Refuse(ReasonInvalidBody, "field q must have 1 to %d characters; it has %d", searchQueryMaxChars, n)
	}
	var terms []storage.SearchTerm
	wanted := false
	rest := q
	for {
		rest = strings.TrimLeftFunc(rest, unicode.IsSpace)
		if rest == "" {
			break
		}
		var t storage.SearchTerm
		var text string
		if strings.HasPrefix(rest, "-") {
			t.Exclude, rest = true, rest[1:]
		}
		if strings.HasPrefix(rest, `"`) {
			end := strings.IndexByte(rest[1:], '"')
			if end < 0 { // an unclosed quote runs to the end
				text, rest = rest[1:], ""
			} else {
				text, rest = rest[1:1+end], rest[2+end:]
			}
			if strings.HasPrefix(rest, "*") {
				t.Prefix = true
				rest = strings.TrimLeft(rest, "*")
			}
		} else {
			end := strings.IndexFunc(rest, func(r rune) bool { return unicode.IsSpace(r) || r == '"' })
			if end < 0 {
				end = len(rest)
			}
			text, rest = rest[:end], rest[end:]
			t.Prefix = strings.HasSuffix(text, "*")
		}
		t.Words = searchWords(text)
		if len(t.Words) == 0 {
			continue // punctuation alone looks for nothing
		}
		wanted = wanted || !t.Exclude
		terms = append(terms, t)
	}
	if !wanted {
		return nil, Refuse(ReasonInvalidBody, "field q has no word to look for: give at least one word that is not excluded with -")
	}
	return terms, nil
}

// searchWords splits text into its words, in lower case.
func searchWords(text string) []string {
	return strings.FieldsFunc(strings.ToLower(text), func(r rune) bool { return !isWordRune(r) })
}

// isWordRune reports whether r belongs to a word: a letter or a number (Unicode's L* and N*,
// the token characters of FTS5's unicode61).
func isWordRune(r rune) bool { return unicode.IsLetter(r) || unicode.IsNumber(r) }
