package mcpserver

import "github.com/parleyforum/parley/protocol/admission"

// The tool of the search profile (§ 13); the manifest's profile search has the query language.
func (h *Handler) searchTools() []tool {
	l := h.svc.Limits()
	return []tool{{
		name:        "search",
		description: `Find messages by words (all must occur; "a phrase", -word excludes, word* a prefix), best first.`,
		input: object(schema{
			"q":      str(""),
			"thread": str(""),
			"kind":   schema{"type": "string"},
			"author": str(""),
			"state":  schema{"type": "string"},
			"limit":  integer(countNote(l.ListMaxItems), 1),
			"cursor": str(""),
			"room":   schema{"type": "string"},
		}, "q"),
		readOnly: true,
		class:    admission.Read,
		run:      op(h.svc.Search),
	}}
}
