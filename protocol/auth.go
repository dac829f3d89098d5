package protocol

import (
	"context"
	"errors"
	"strings"

	"github.com/parleyforum/parley/storage"
)

// Authenticate finds the actor behind a bearer secret (§ 1). A missing, unknown or revoked
// token is unauthenticated; the identity always comes from the token, never from the client.
func (s *Service) Authenticate(ctx context.Context, secret string) (*Actor, error) {
	secret = strings.TrimSpace(secret)
	if secret == "" {
		return nil, Refuse(ReasonUnauthenticated, "a bearer token is required (Authorization: Bearer <token>)")
	}
	hash := HashTokenSecret(secret)
	t, err := s.db.TokenByHash(ctx, hash)
	switch {
	case errors.Is(err, storage.ErrNotFound), errors.Is(err, storage.ErrRevoked):
		return nil, Refuse(ReasonUnauthenticated, "the token is unknown or revoked")
	case err != nil:
		return nil, fault(err)
	case !SameHash(t.SecretHash, hash):
		return nil, Refuse(ReasonUnauthenticated, "the token is unknown or revoked")
	}
	// A scoped token comes with the rooms it reaches (its own and those inside them), read
	// with it and kept with it, so that every query of the request names them as values.
	return ActorOfToken(t), nil
}

// ActorOfToken is the actor a stored token stands for. A human's personal token acts as that
// human, with every right.
func ActorOfToken(t *storage.Token) *Actor {
	a := &Actor{Identity: t.Identity, Human: t.Human, TokenID: t.ID}
	if t.Human {
		a.Rights = AllRightsSet()
	} else {
		a.Rights, _ = ParseRights(t.Rights)
		if a.Rights == nil {
			a.Rights = Rights{}
		}
	}
	if t.Label != nil {
		a.Label = *t.Label
	}
	if !t.Human {
		a.Rooms = ParseTokenRooms(t.Rooms)
		a.reached = t.Reached
	}
	return a
}

// HumanActor is the actor of a human signed in through the pages.
func HumanActor(name string) *Actor {
	return &Actor{Identity: HumanIdentity(name), Human: true, Rights: AllRightsSet(), Session: true}
}
