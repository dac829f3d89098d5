package protocol

import (
	"context"
	"strings"
	"time"
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
// refused as rate_limited, with retry_after, before its token is looked at.
func (s *Service) AuthenticateHeader(ctx context.Context, client string, authorization []string) (*Actor, error) {
	if len(authorization) == 0 || (len(authorization) == 1 && strings.TrimSpace(authorization[0]) == "") {
		return nil, nil
	}
	now := time.Now()
	if retryAfter, full := s.failedAuths.full(client, now); full {
		e := Refuse(ReasonRateLimited, "too many failed authentications from this address; retry in %d seconds", retryAfter)
		e.RetryAfter = retryAfter
		return nil, e
	}
	a, err := s.authenticateHeaders(ctx, authorization)
	if e, refused := AsError(err); refused && e.Reason == ReasonUnauthenticated {
		s.failedAuths.reserve(client, now)
	}
	return a, err
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
