package protocol

// SetReadPageBytes makes pages of read_thread and claim_graph n bytes for a test, so that a
// few messages and claims span several pages; the returned function restores the bound.
func SetReadPageBytes(n int) (restore func()) {
	old := readPageBytes
	readPageBytes = n
	return func() { readPageBytes = old }
}
