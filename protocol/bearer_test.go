package protocol_test

import (
	"context"
	"testing"

	"github.com/parleyforum/parley/protocol"
	"github.com/parleyforum/parley/storage"
	"github.com/parleyforum/parley/storage/storagetest"
)

func TestAuthenticateHeader(t *testing.T) {
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		ctx := context.Background()
		svc := protocol.New(db, protocol.Options{})
		secret, err := protocol.NewTokenSecret()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := db.CreateToken(ctx, storage.NewToken{Identity: "ainotes:alice", SecretHash: protocol.HashTokenSecret(secret), Rights: "read"}); err != nil {
			t.Fatal(err)
		}
		for _, c := range []struct {
			header   string
			identity string // "" for no actor
			refused  bool
		}{
			{"", "", false},
			{"  ", "", false},
			{"Bearer " + secret, "ainotes:alice", false},
			{"bearer  " + secret + " ", "ainotes:alice", false},
			{"BEARER " + secret, "ainotes:alice", false},
			{"Bearer parley_unknown", "", true},
			{"Bearer", "", true},
			{"Bearer ", "", true},
			{"Bearer " + secret + " extra", "", true},
			{"Basic YWxpY2U6c2VjcmV0", "", true},
			{secret, "", true},
		} {
			a, err := svc.AuthenticateHeader(ctx, "192.0.2.1", []string{c.header})
			if c.refused {
				if e, ok := protocol.AsError(err); !ok || e.Reason != protocol.ReasonUnauthenticated {
					t.Errorf("%q: %v, want unauthenticated", c.header, err)
				}
				continue
			}
			if err != nil {
				t.Errorf("%q: %v", c.header, err)
				continue
			}
			got := ""
			if a != nil {
				got = a.Identity
			}
			if got != c.identity {
				t.Errorf("%q: actor %q, want %q", c.header, got, c.identity)
			}
		}
	})
}

// Two Authorization headers are two opinions on who sent the request: refused, whichever
// names a valid token, and the same way over every transport (the transports pass every
// value they received).
func TestAuthenticateHeaderRefusesMoreThanOneHeader(t *testing.T) {
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		ctx := context.Background()
		svc := protocol.New(db, protocol.Options{})
		alice, bob := newSecret(t, db, "ainotes:alice"), newSecret(t, db, "ainotes:bob")
		for _, headers := range [][]string{
			{"Bearer " + alice, "Bearer " + bob},
			{"Bearer " + alice, "Bearer " + alice},
			{"Bearer " + alice, ""},
			{"", "Bearer " + alice},
		} {
			a, err := svc.AuthenticateHeader(ctx, "192.0.2.1", headers)
			if e, ok := protocol.AsError(err); !ok || e.Reason != protocol.ReasonUnauthenticated || a != nil {
				t.Errorf("%q: %v %v, want unauthenticated", headers, a, err)
			}
		}
	})
}

// Failed authentications are limited per client address: once an address has failed
// failed_auths_per_minute times, every token it sends — a good one too — is rate_limited with
// retry_after, unread; other addresses are not affected.
func TestFailedAuthenticationsAreLimitedPerAddress(t *testing.T) {
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		ctx := context.Background()
		limits := protocol.DefaultLimits()
		limits.FailedAuthsPerMinute = 3
		svc := protocol.New(db, protocol.Options{Limits: limits})
		alice := newSecret(t, db, "ainotes:alice")
		const guesser, other = "192.0.2.66", "192.0.2.7"
		if a, err := svc.AuthenticateHeader(ctx, guesser, []string{"Bearer " + alice}); err != nil || a == nil {
			t.Fatalf("a good token before any failure: %v", err)
		}
		for i := range 3 {
			_, err := svc.AuthenticateHeader(ctx, guesser, []string{"Bearer parley_guess"})
			if e, ok := protocol.AsError(err); !ok || e.Reason != protocol.ReasonUnauthenticated {
				t.Fatalf("guess %d: %v, want unauthenticated", i+1, err)
			}
		}
		for _, header := range []string{"Bearer parley_guess", "Bearer " + alice} {
			_, err := svc.AuthenticateHeader(ctx, guesser, []string{header})
			e, ok := protocol.AsError(err)
			if !ok || e.Reason != protocol.ReasonRateLimited || e.Status != 429 || e.RetryAfter < 1 || e.RetryAfter > 60 {
				t.Fatalf("after 3 failures, %q: %v, want rate_limited with retry_after", header, err)
			}
		}
		if a, err := svc.AuthenticateHeader(ctx, other, []string{"Bearer " + alice}); err != nil || a == nil {
			t.Fatalf("another address is limited too: %v", err)
		}
		if a, err := svc.AuthenticateHeader(ctx, guesser, nil); err != nil || a != nil {
			t.Fatalf("without a token the limit does not apply: %v %v", a, err)
		}
	})
}

func newSecret(t *testing.T, db *storage.DB, identity string) string {
	t.Helper()
	secret, err := protocol.NewTokenSecret()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.CreateToken(context.Background(), storage.NewToken{Identity: identity, SecretHash: protocol.HashTokenSecret(secret), Rights: "read"}); err != nil {
		t.Fatal(err)
	}
	return secret
}

// The failed authentications are counted in the database: two instances on one database
// share the limit, as they share writes_per_minute.
func TestFailedAuthenticationsAreLimitedAcrossInstances(t *testing.T) {
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		ctx := context.Background()
		limits := protocol.DefaultLimits()
		limits.FailedAuthsPerMinute = 4
		one := protocol.New(db, protocol.Options{Limits: limits})
		two := protocol.New(db, protocol.Options{Limits: limits})
		const guesser = "192.0.2.66"
		for i, svc := range []*protocol.Service{one, two, one, two} {
			_, err := svc.AuthenticateHeader(ctx, guesser, []string{"Bearer parley_guess"})
			if e, ok := protocol.AsError(err); !ok || e.Reason != protocol.ReasonUnauthenticated {
				t.Fatalf("guess %d: %v, want unauthenticated", i+1, err)
			}
		}
		for i, svc := range []*protocol.Service{two, one} {
			_, err := svc.AuthenticateHeader(ctx, guesser, []string{"Bearer parley_guess"})
			if e, ok := protocol.AsError(err); !ok || e.Reason != protocol.ReasonRateLimited {
				t.Fatalf("instance %d after 4 failures on both: %v, want rate_limited", i+1, err)
			}
		}
	})
}
