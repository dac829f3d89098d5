package protocol_test

import (
	"context"
	"testing"
	"time"

	"github.com/parleyforum/parley/protocol"
	"github.com/parleyforum/parley/protocol/admission"
)

// A refusal of the gate is a refusal of § 9: the holder's full share is rate_limited with
// retry_after, a class without a free slot unavailable with a Retry-After hint only.
func TestAdmitRefusesInTheProtocolsTerms(t *testing.T) {
	var cfg admission.Config
	cfg.Capacity[admission.Drawing] = 1
	cfg.Wait = time.Millisecond
	svc := protocol.New(nil, protocol.Options{Gate: admission.New(cfg)})
	ctx := context.Background()
	alice := protocol.HolderOf(&protocol.Actor{Identity: "ainotes:alice"}, "192.0.2.1")

	release, err := svc.Admit(ctx, admission.Drawing, alice)
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	_, err = svc.Admit(ctx, admission.Drawing, protocol.HolderOf(nil, "192.0.2.7"))
	e, ok := protocol.AsError(err)
	if !ok || e.Reason != protocol.ReasonUnavailable || e.Status != 503 || e.RetryAfter != 0 || e.RetryHint < 1 {
		t.Fatalf("every drawing slot taken: %+v, want unavailable with a retry hint and no retry_after", e)
	}

	second, err := svc.Admit(ctx, admission.Export, alice)
	if err != nil {
		t.Fatal(err)
	}
	defer second()
	_, err = svc.Admit(ctx, admission.Export, alice)
	e, ok = protocol.AsError(err)
	if !ok || e.Reason != protocol.ReasonRateLimited || e.Status != 429 || e.RetryAfter < 1 {
		t.Fatalf("a third heavy slot of one identity: %+v, want rate_limited with retry_after", e)
	}
}
