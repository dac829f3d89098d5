package main

import "testing"

// Without -X main.version a local build (whose module version Go records as "(devel)") is
// "dev"; with it, the stamped version wins. The stamped case runs through the binary in
// TestVersionHelpExport.
func TestVersionDefaultsToDev(t *testing.T) {
	if version != "" {
		t.Fatalf("the test binary has version %q stamped; the default cannot be tested", version)
	}
	if got := parleyVersion(); got != "dev" {
		t.Errorf("parleyVersion() = %q, want dev", got)
	}
	version = "v1.2.3"
	defer func() { version = "" }()
	if got := parleyVersion(); got != "v1.2.3" {
		t.Errorf("parleyVersion() with a stamped version = %q", got)
	}
}
