package mcpserver

// The tool of the search profile (§ 13); the manifest's profile search has the query language.
func (h *Handler) searchTools() []tool {
	l := h.svc.Limits()
	return []tool{{
		name:        "search",
		description: `Find earlier messages by words (all must occur; "a phrase", -word excludes, word* a prefix), best match first.`,
		input: object(schema{
			"q":      str("1 to 200 characters"),
			"thread": str("th_<n>: only this thread"),
			"kind":   enum("only messages of this kind", kindNames()),
			"author": str("only messages of this identity"),
			"state":  enum("only threads in this state", stateNames()),
			"limit":  integer(countNote(l.ListMaxItems), 1),
			"cursor": str("the cursor of the previous page"),
		}, "q"),
		output:   result(schema{"results": objectList, "cursor": nullableText, "more": flag}),
		readOnly: true,
		run:      op(h.svc.Search),
	}}
}
