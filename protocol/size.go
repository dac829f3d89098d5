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
// export: it may be as large as import_max_bytes. A body that declares no size is counted as
// it is read (ReadImport).
func (s *Service) CheckImportSize(n int) error {
	if n > s.limits.ImportMaxBytes {
		return importTooLarge(s.limits.ImportMaxBytes)
	}
	return nil
}

func importTooLarge(max int) *Error {
	return Refuse(ReasonPayloadTooLarge, "the import is larger than import_max_bytes (%d bytes)", max)
}
