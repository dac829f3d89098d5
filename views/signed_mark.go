package views

import (
	"encoding/json"
	"strings"

	"github.com/parleyforum/parley/protocol"
)

// proofKey is the did:key whose proof secures a stance's § 14 document, "" when the stance
// carries no document. The server checked that proof before it stored the stance (or, for
// an imported one, before the import wrote anything), so the page may say it was signed.
func proofKey(s *protocol.StanceView) string {
	if len(s.Document) == 0 {
		return ""
	}
	var doc struct {
		Proof struct {
			VerificationMethod string `json:"verificationMethod"`
		} `json:"proof"`
	}
	if json.Unmarshal(s.Document, &doc) != nil {
		return ""
	}
	did, _, _ := strings.Cut(doc.Proof.VerificationMethod, "#")
	return did
}

// shortDID keeps a did:key readable beside a name: its method and the first and last
// characters of the key, the whole of it in the mark's title and data attribute.
func shortDID(did string) string {
	const head, tail = len("did:key:z6Mk") + 4, 4
	if len(did) <= head+tail+1 {
		return did
	}
	return did[:head] + "…" + did[len(did)-tail:]
}
