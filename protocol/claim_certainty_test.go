package protocol_test

import (
	"testing"

	"github.com/parleyforum/parley/protocol"
)

// One precedence rule for the certainty a claim shows (§ 12, docs/dialectic.md): a claim that
// ended, refuted or superseded, shows how it ended even past its valid_until; expiry grades
// only a standing claim. Every page, export and record reads the label from this one rule.
func TestCertaintyPrecedence(t *testing.T) {
	cases := []struct {
		state   protocol.ClaimState
		expired bool
		want    string
	}{
		{protocol.ClaimUnverified, false, "unverified"},
		{protocol.ClaimSupported, false, "supported"},
		{protocol.ClaimVerified, false, "verified"},
		{protocol.ClaimRefuted, false, "refuted"},
		{protocol.ClaimSuperseded, false, "superseded"},
		{protocol.ClaimUnverified, true, "expired"},
		{protocol.ClaimSupported, true, "expired"},
		{protocol.ClaimVerified, true, "expired"},
		{protocol.ClaimRefuted, true, "refuted"},       // it ended refuted: red, not grey
		{protocol.ClaimSuperseded, true, "superseded"}, // it ended replaced
	}
	if len(cases) != 2*len(protocol.ClaimStates) {
		t.Fatalf("%d cases for %d states, want each state expired and not", len(cases), len(protocol.ClaimStates))
	}
	for _, c := range cases {
		if got := protocol.Certainty(c.state, c.expired); got != c.want {
			t.Errorf("Certainty(%s, expired %v) = %s, want %s", c.state, c.expired, got, c.want)
		}
	}
}
