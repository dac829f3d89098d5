package protocol_test

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/parleyforum/parley/protocol"
)

// FuzzDecodeEnvelope: whatever the bytes, DecodeEnvelope does not panic, and either returns
// an envelope that is valid by § 2 — and decodes to itself again when written back — or
// refuses with invalid_body. Its seeds are the envelope tables of envelope_test.go and the
// corpus in testdata/fuzz/FuzzDecodeEnvelope.
func FuzzDecodeEnvelope(f *testing.F) {
	for _, c := range envelopeRefusals {
		f.Add([]byte(c.env))
	}
	for _, c := range envelopeAccepted {
		f.Add([]byte(c.env))
	}
	small := protocol.DefaultLimits()
	small.BodyMaxChars, small.ExtensionMaxChars, small.ProvenanceFieldMaxChars = 5, 3, 2
	f.Fuzz(func(t *testing.T, raw []byte) {
		env := decodeChecked(t, raw, protocol.DefaultLimits())
		if env == nil {
			// What the reference limits refuse, smaller limits refuse too.
			if decodeChecked(t, raw, small) != nil {
				t.Fatalf("%q passes small limits but not the reference limits", raw)
			}
			return
		}
		decodeChecked(t, raw, small)
		// Written back as an envelope, it decodes to itself.
		again, err := protocol.DecodeEnvelope(envelopeJSON(env), protocol.DefaultLimits())
		if err != nil {
			t.Fatalf("%q decodes to %+v, which written back as %s is refused: %v", raw, env, envelopeJSON(env), err)
		}
		if jsonOf(again) != jsonOf(env) {
			t.Fatalf("%q decodes to %s, written back to %s", raw, jsonOf(env), jsonOf(again))
		}
	})
}

// decodeChecked decodes raw under limits and checks the invariants of either outcome; it
// returns the envelope, or nil for a refusal.
func decodeChecked(t *testing.T, raw []byte, limits protocol.Limits) *protocol.Envelope {
	t.Helper()
	env, err := protocol.DecodeEnvelope(raw, limits)
	if err != nil {
		if env != nil {
			t.Fatalf("%q: both an envelope and a refusal", raw)
		}
		if err.Reason != protocol.ReasonInvalidBody || err.Status != 400 || err.Message == "" {
			t.Fatalf("%q: refused with %+v, want invalid_body", raw, err)
		}
		return nil
	}
	if env == nil {
		t.Fatalf("%q: neither an envelope nor a refusal", raw)
	}
	if !protocol.IsKind(env.Kind) {
		t.Fatalf("%q: kind %q is not one of the nine", raw, env.Kind)
	}
	if n := utf8.RuneCountInString(env.Body); n < 1 || n > limits.BodyMaxChars || strings.TrimFunc(env.Body, unicode.IsSpace) == "" {
		t.Fatalf("%q: body %q of %d code points (limit %d)", raw, env.Body, n, limits.BodyMaxChars)
	}
	if !utf8.ValidString(env.Body) {
		t.Fatalf("%q: body %q is not UTF-8", raw, env.Body)
	}
	if env.Thread < 0 || env.Parent < 0 {
		t.Fatalf("%q: ids thread %d, parent %d", raw, env.Thread, env.Parent)
	}
	if env.Kind != protocol.KindAsk && env.Thread == 0 && env.Parent == 0 {
		t.Fatalf("%q: a %s without thread or parent", raw, env.Kind)
	}
	if env.Extension != "" && (!protocol.ValidExtension(env.Extension) || len(env.Extension) > limits.ExtensionMaxChars) {
		t.Fatalf("%q: extension %q (limit %d)", raw, env.Extension, limits.ExtensionMaxChars)
	}
	for _, p := range []*string{env.Provenance.Model, env.Provenance.Client} {
		if p != nil && utf8.RuneCountInString(*p) > limits.ProvenanceFieldMaxChars {
			t.Fatalf("%q: provenance %q over %d", raw, *p, limits.ProvenanceFieldMaxChars)
		}
	}
	return env
}

// envelopeJSON writes a decoded envelope in the wire form of § 2.
func envelopeJSON(env *protocol.Envelope) []byte {
	m := map[string]any{"parley": "1", "kind": env.Kind, "body": env.Body}
	if env.Thread != 0 {
		m["thread"] = protocol.ThreadKey(env.Thread)
	}
	if env.Parent != 0 {
		m["parent"] = protocol.MessageKey(env.Parent)
	}
	if env.Extension != "" {
		m["from"] = map[string]string{"extension": env.Extension}
	}
	if env.Provenance.Model != nil || env.Provenance.Client != nil {
		m["provenance"] = env.Provenance
	}
	b, err := json.Marshal(m)
	if err != nil {
		panic(err)
	}
	return b
}
