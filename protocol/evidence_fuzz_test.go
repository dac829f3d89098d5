package protocol

import (
	"encoding/json"
	"testing"
	"unicode/utf8"
)

// FuzzDecodeEvidence: whatever the evidence field holds, its decoding does not panic, and
// either refuses with invalid_body or gives items that are valid by § 12 — a known kind, a
// ref its kind accepts, within the limits — and decode to themselves when written back.
func FuzzDecodeEvidence(f *testing.F) {
	for _, seed := range []string{
		`[{"kind":"url","ref":"https://example.org/a"}]`,
		`[{"kind":"hash","ref":"sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef","note":"n"}]`,
		`[{"kind":"commit","ref":"parley@abcdef1"},{"kind":"log","ref":"l"}]`,
		`[{"kind":"artifact","ref":"sha256:00"}]`, `[]`, `{}`, `null`, `[{"kind":"url"}]`, `[{"kind":"note","ref":"","x":1}]`,
	} {
		f.Add([]byte(seed))
	}
	limits := DefaultLimits()
	limits.EvidenceMaxItems, limits.EvidenceRefMaxChars = 3, 64
	f.Fuzz(func(t *testing.T, raw []byte) {
		o := &object{fields: map[string]json.RawMessage{"evidence": raw}}
		items, stored, err := decodeEvidence(o, true, limits)
		if err != nil {
			if err.Reason != ReasonInvalidBody || err.Message == "" {
				t.Fatalf("%q: refused with %+v, want invalid_body", raw, err)
			}
			return
		}
		if len(items) == 0 || len(items) > limits.EvidenceMaxItems {
			t.Fatalf("%q: %d items accepted", raw, len(items))
		}
		storedRefs := 0
		for _, e := range items {
			k, ok := evidenceKind(e.Kind)
			if !ok || k.check(e.Ref) != "" || e.Ref == "" || utf8.RuneCountInString(e.Ref) > limits.EvidenceRefMaxChars {
				t.Fatalf("%q: accepted item %+v", raw, e)
			}
			if e.Note != nil && utf8.RuneCountInString(*e.Note) > evidenceNoteMaxChars {
				t.Fatalf("%q: accepted a note of %d characters", raw, utf8.RuneCountInString(*e.Note))
			}
			if k.stored {
				storedRefs++
			}
		}
		if storedRefs != len(stored) {
			t.Fatalf("%q: %d artifact items, %d refs to look up", raw, storedRefs, len(stored))
		}
		again, _, err := decodeEvidence(&object{fields: map[string]json.RawMessage{"evidence": json.RawMessage(encodeEvidence(items))}}, true, limits)
		if err != nil || encodeEvidence(again) != encodeEvidence(items) {
			t.Fatalf("%q decodes to %s, which written back gives %s (%v)", raw, encodeEvidence(items), encodeEvidence(again), err)
		}
	})
}
