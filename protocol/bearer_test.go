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
			a, err := svc.AuthenticateHeader(ctx, c.header)
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
