package protocol_test

import (
	"context"
	"testing"

	"github.com/parleyforum/parley/protocol"
)

func TestGetManifestTakesNoFields(t *testing.T) {
	svc := protocol.New(nil, protocol.Options{}) // the manifest needs no database
	alice := &protocol.Actor{Identity: "ainotes:alice", Rights: protocol.Rights{protocol.RightRead: true}}
	for _, c := range []struct {
		input   string
		actor   *protocol.Actor
		refused bool
	}{
		{`{}`, nil, false},
		{` { } `, alice, false},
		{`{"verbose":null}`, nil, false}, // null counts as absent (§ 2)
		{`{"verbose":true}`, nil, true},
		{`[]`, nil, true},
		{`{} {}`, alice, true},
	} {
		m, err := svc.GetManifest(context.Background(), c.actor, []byte(c.input))
		if c.refused {
			if e, ok := protocol.AsError(err); !ok || e.Reason != protocol.ReasonInvalidBody {
				t.Errorf("%s: %v, want invalid_body", c.input, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", c.input, err)
			continue
		}
		if (m.You != nil) != (c.actor != nil) {
			t.Errorf("%s: you = %+v for actor %v", c.input, m.You, c.actor)
		}
	}
}
