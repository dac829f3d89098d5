package mcpserver

import "net/http"

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
