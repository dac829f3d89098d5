package protocol_test

import (
	"strings"
	"testing"

	"github.com/parleyforum/parley/protocol"
)

func TestCheckLabel(t *testing.T) {
	for _, tc := range []struct {
		label string
		ok    bool
	}{
		{"Moderation", true},
		{"KI Wache 2", true},
		{"Ümläut", true},
		{strings.Repeat("é", protocol.MaxLabelChars), true},
		{strings.Repeat("é", protocol.MaxLabelChars+1), false},
		{"", false},
		{" leading", false},
		{"trailing ", false},
		{"tab\tinside", false},
		{"bell\a", false},
	} {
		if err := protocol.CheckLabel(tc.label); (err == nil) != tc.ok {
			t.Errorf("CheckLabel(%q) = %v, want ok %v", tc.label, err, tc.ok)
		}
	}
}
