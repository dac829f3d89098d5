package protocol

import (
	"iter"
	"strings"
	"unicode/utf8"

	"github.com/parleyforum/parley/storage"
)

// The snippet of a search result: plain text of the body around its first match, cut
// between words, with … where it was cut. It is never HTML; a page that shows it marks the
// matches up itself.

const (
	snippetMaxChars    = 160 // code points, at most, before the marks of a cut
	snippetBeforeMatch = 40  // code points kept before the first match, at most
)

// snippet is the plain text of body around the first word that a wanted term looks for.
func snippet(body string, terms []storage.SearchTerm) string {
	if utf8.RuneCountInString(body) <= snippetMaxChars {
		return body
	}
	runes := []rune(body)
	start, end := 0, 0 // the window, in runes
	if at := firstMatch(runes, terms); at > snippetBeforeMatch {
		start = wordStart(runes, at-snippetBeforeMatch)
	}
	end = min(len(runes), start+snippetMaxChars)
	if end < len(runes) {
		end = wordEnd(runes, start, end)
	}
	out := strings.TrimSpace(string(runes[start:end]))
	if start > 0 {
		out = "…" + out
	}
	if end < len(runes) {
		out += "…"
	}
	return out
}

// firstMatch is the rune offset of the first word of runes that a term not excluded looks
// for (0 when none is found).
func firstMatch(runes []rune, terms []storage.SearchTerm) int {
	for start, end := range wordSpans(runes) {
		if wanted(terms, string(runes[start:end])) {
			return start
		}
	}
	return 0
}

// wordSpans yields where each word of runes starts and ends, in runes.
func wordSpans(runes []rune) iter.Seq2[int, int] {
	return func(yield func(int, int) bool) {
		for i := 0; i < len(runes); {
			if !isWordRune(runes[i]) {
				i++
				continue
			}
			j := i
			for j < len(runes) && isWordRune(runes[j]) {
				j++
			}
			if !yield(i, j) {
				return
			}
			i = j
		}
	}
}

// wanted reports whether a term not excluded looks for word, in any case.
func wanted(terms []storage.SearchTerm, word string) bool {
	word = strings.ToLower(word)
	for _, t := range terms {
		if !t.Exclude && looksFor(t, word) {
			return true
		}
	}
	return false
}

// looksFor reports whether word is one of the words of t (or begins like its prefix).
func looksFor(t storage.SearchTerm, word string) bool {
	for i, w := range t.Words {
		if word == w || (t.Prefix && i == len(t.Words)-1 && strings.HasPrefix(word, w)) {
			return true
		}
	}
	return false
}

// wordStart moves i forward to the start of a word, unless that would skip past the match.
func wordStart(runes []rune, i int) int {
	if !isWordRune(runes[i-1]) {
		return i
	}
	for j := i; j < len(runes) && j < i+snippetBeforeMatch; j++ {
		if !isWordRune(runes[j]) {
			return j + 1
		}
	}
	return i
}

// wordEnd moves end back to the end of a word, unless the window holds just one.
func wordEnd(runes []rune, start, end int) int {
	for j := end; j > start; j-- {
		if !isWordRune(runes[j-1]) || !isWordRune(runes[j]) {
			return j
		}
	}
	return end
}
