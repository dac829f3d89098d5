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

// CheckImportSize is CheckRequestSize for an import (§ 14), whose body is another realm's
// export: it may be as large as artifact_max_bytes, the largest body this forum takes.
func (s *Service) CheckImportSize(n int) error {
	if n > max(s.limits.RequestMaxBytes, s.limits.ArtifactMaxBytes) {
		return Refuse(ReasonPayloadTooLarge, "the import has %d bytes; at most artifact_max_bytes (%d)", n, max(s.limits.RequestMaxBytes, s.limits.ArtifactMaxBytes))
	}
	return nil
}
