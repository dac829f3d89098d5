package protocol

import (
	"context"
	"strings"
	"sync"
	"time"

	"github.com/parleyforum/parley/storage"
)

// AuthenticateHeader finds the actor behind the Authorization headers of a request, as both
// transports take the token (§ 10: "Authorization: Bearer <token>"); authorization holds the
// value of each such header, in order, and client is the address the request came from.
// Without the header the actor is nil, and each operation answers unauthenticated where it
// needs a token (the manifest does not). A header that is sent is always checked: one that is
// not "Bearer <token>", or whose token is unknown or revoked, is unauthenticated, the manifest
// included, so that a client with a wrong token learns it at once rather than reading
// anonymous answers. More than one header is unauthenticated too: a proxy that reads the
// first and a server that reads the last would each name a different sender (§ 10).
//
// A client address that failed limits.failed_auths_per_minute times in the last minute is
// refused as rate_limited, with retry_after, before its token is looked at. The failures are
// counted in the database (storage.DB.CountAttempt), so that the limit holds across every
// instance on it; an instance that finds the count full refuses the address from memory until
// the window frees up, without asking the database again.
func (s *Service) AuthenticateHeader(ctx context.Context, client string, authorization []string) (*Actor, error) {
	if len(authorization) == 0 || (len(authorization) == 1 && strings.TrimSpace(authorization[0]) == "") {
		return nil, nil
	}
	now := time.Now()
	if until, blocked := s.authBlocks.until(client, now); blocked {
		return nil, authRateLimited(until, now)
	}
	a, err := s.authenticateHeaders(ctx, authorization)
	if e, refused := AsError(err); refused && e.Reason == ReasonUnauthenticated {
		key, limit := "auth:"+client, s.limits.FailedAuthsPerMinute
		free, counted, cerr := s.db.CountAttempt(ctx, key, storage.Now(), time.Minute, limit)
		if cerr == nil && !counted {
			s.authBlocks.block(client, free)
			return nil, authRateLimited(free, now)
		}
		// The failure that fills the count is answered as what it is, and from then on the
		// address is refused, its valid tokens too, until the window frees up.
		if cerr == nil {
			if free, full, ferr := s.db.AttemptsFull(ctx, key, storage.Now(), time.Minute, limit); ferr == nil && full {
				s.authBlocks.block(client, free)
			}
		}
	}
	return a, err
}

// authRateLimited is the refusal of an address with too many failed authentications.
func authRateLimited(until, now time.Time) *Error {
	retryAfter := max(1, int((until.Sub(now)+time.Second-1)/time.Second))
	e := Refuse(ReasonRateLimited, "too many failed authentications from this address; retry in %d seconds", retryAfter)
	e.RetryAfter = retryAfter
	return e
}

// blocks are the client addresses this instance refuses until a time, learnt from the
// database's count of their failures.
type blocks struct {
	mu sync.Mutex
	m  map[string]time.Time
}

func (b *blocks) until(key string, now time.Time) (time.Time, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	t, ok := b.m[key]
	if ok && !now.Before(t) {
		delete(b.m, key)
		return time.Time{}, false
	}
	return t, ok
}

func (b *blocks) block(key string, until time.Time) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.m == nil || len(b.m) > 100000 {
		b.m = map[string]time.Time{} // a flood of addresses forgets the oldest blocks at once
	}
	b.m[key] = until
}

func (s *Service) authenticateHeaders(ctx context.Context, authorization []string) (*Actor, error) {
	if len(authorization) > 1 {
		return nil, Refuse(ReasonUnauthenticated, "the request has %d Authorization headers; send exactly one", len(authorization))
	}
	secret, ok := BearerSecret(authorization[0])
	if !ok {
		return nil, Refuse(ReasonUnauthenticated, `the Authorization header must be "Bearer <token>"`)
	}
	return s.Authenticate(ctx, secret)
}

// BearerSecret reads the secret of "Bearer <secret>": the scheme is case-insensitive (RFC
// 9110 § 11.1) and the secret is one word.
func BearerSecret(authorization string) (string, bool) {
	scheme, secret, found := strings.Cut(strings.TrimSpace(authorization), " ")
	secret = strings.TrimSpace(secret)
	if !found || !strings.EqualFold(scheme, "Bearer") || secret == "" || strings.ContainsAny(secret, " \t") {
		return "", false
	}
	return secret, true
}
