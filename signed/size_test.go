package signed_test

import (
	"encoding/base64"
	"testing"

	"github.com/parleyforum/parley/signed"
)

// A signature of the wrong size is refused with its own size first, then the size it must
// have: "has 63 bytes, not 64" for 63 bytes (the public key's message is tested beside
// CheckPublicKey).
func TestSignatureSizeMessage(t *testing.T) {
	for n, want := range map[int]string{63: "a signature has 63 bytes, not 64", 65: "a signature has 65 bytes, not 64"} {
		_, err := signed.Signature(base64.StdEncoding.EncodeToString(make([]byte, n)))
		if err == nil || err.Error() != want {
			t.Errorf("a signature of %d bytes: %v, want %q", n, err, want)
		}
	}
	if _, err := signed.Signature(base64.StdEncoding.EncodeToString(make([]byte, 64))); err != nil {
		t.Errorf("a signature of 64 bytes: %v", err)
	}
}
