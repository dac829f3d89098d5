package mcpserver

// The tool of the search profile (§ 13); the manifest's profile search has the query language.
func (h *Handler) searchTools() []tool {
	l := h.svc.Limits()
	return []tool{{
		name:        "search",
		description: `Find earlier messages by words (all must occur; "a phrase", -word excludes, word* a prefix), best match first.`,
		input: object(schema{
			"q":      str(""),
			"thread": str("th_<n>"),
			"kind":   schema{"type": "string"},
			"author": str("an identity"),
			"state":  schema{"type": "string"},
			"limit":  integer(countNote(l.ListMaxItems), 1),
			"cursor": str("a returned cursor"),
			"room":   schema{"type": "string"},
		}, "q"),
		readOnly: true,
		run:      op(h.svc.Search),
	}}
}
