package mcpserver

import (
	"net/http"

	"github.com/parleyforum/parley/protocol/admission"
)

// WatchCalls lets tests see a tool call begin and end, where nothing else shows it.
func WatchCalls(h *Handler, begin, end func()) {
	h.watch = func(string) func() { begin(); return end }
}

// AllViaSDK makes h hand every request to the SDK, as it did before it answered calls
// itself, so that tests can compare the two.
func AllViaSDK(h *Handler) { h.viaSDK = true }

// AnswersDirectly reports whether h answers the request itself rather than through the SDK.
func AnswersDirectly(h *Handler, r *http.Request, body []byte) bool {
	_, ok := h.direct(r, body)
	return ok
}

// ToolClasses is the admission class each tool of h declares, by the tool's name.
func ToolClasses(h *Handler) map[string]admission.Class {
	out := map[string]admission.Class{}
	for name, t := range h.byName {
		out[name] = t.class
	}
	return out
}
