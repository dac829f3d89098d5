package protocol_test

import (
	"testing"

	"github.com/parleyforum/parley/protocol"
)

func TestCheckRequestSize(t *testing.T) {
	limits := protocol.DefaultLimits()
	limits.RequestMaxBytes = 100
	svc := protocol.New(nil, protocol.Options{Limits: limits}) // the size check needs no database
	for _, c := range []struct {
		n       int
		refused bool
	}{{0, false}, {99, false}, {100, false}, {101, true}, {1 << 20, true}} {
		err := svc.CheckRequestSize(c.n)
		e, isRefusal := protocol.AsError(err)
		switch {
		case c.refused && (!isRefusal || e.Reason != protocol.ReasonPayloadTooLarge || e.Status != 413):
			t.Errorf("%d bytes: %v, want payload_too_large", c.n, err)
		case !c.refused && err != nil:
			t.Errorf("%d bytes: %v, want accepted", c.n, err)
		}
	}
}
