package protocol

// CheckRequestSize is the first check of § 9: a request of n bytes over request_max_bytes is
// refused with payload_too_large before it is parsed. Every transport measures the same
// thing, the operation's input (the HTTP body, the MCP tool arguments), so that one input
// gets one decision everywhere.
func (s *Service) CheckRequestSize(n int) error {
	if n > s.limits.RequestMaxBytes {
		return Refuse(ReasonPayloadTooLarge, "the request has %d bytes; at most request_max_bytes (%d)", n, s.limits.RequestMaxBytes)
	}
	return nil
}
