package protocol

// A page that shows a search result marks the words the query looked for. Which words those
// are is the query language's to say, so it is said here, next to the parser and the
// snippet, and a page only turns the parts into markup.

// TextPart is a piece of plain text; Match says whether the query looked for it.
type TextPart struct {
	Text  string
	Match bool
}

// SearchMarks splits text into parts, marking each word that a term of q (one not excluded)
// looks for. A query that is refused, or finds nothing in text, gives text as one part.
func SearchMarks(q, text string) []TextPart {
	terms, err := parseSearchQuery(q)
	if err != nil {
		return []TextPart{{Text: text}}
	}
	runes := []rune(text)
	var parts []TextPart
	plainFrom := 0
	for start, end := range wordSpans(runes) {
		if wanted(terms, string(runes[start:end])) {
			if plainFrom < start {
				parts = append(parts, TextPart{Text: string(runes[plainFrom:start])})
			}
			parts = append(parts, TextPart{Text: string(runes[start:end]), Match: true})
			plainFrom = end
		}
	}
	if plainFrom < len(runes) || len(parts) == 0 {
		parts = append(parts, TextPart{Text: string(runes[plainFrom:])})
	}
	return parts
}
