package protocol

import (
	"context"
	"strings"
)

// AuthenticateHeader finds the actor behind an Authorization header, as both transports take
// the token (§ 10: "Authorization: Bearer <token>"). Without the header the actor is nil, and
// each operation answers unauthenticated where it needs a token (the manifest does not). A
// header that is sent is always checked: one that is not "Bearer <token>", or whose token is
// unknown or revoked, is unauthenticated, the manifest included, so that a client with a
// wrong token learns it at once rather than reading anonymous answers.
func (s *Service) AuthenticateHeader(ctx context.Context, authorization string) (*Actor, error) {
	authorization = strings.TrimSpace(authorization)
	if authorization == "" {
		return nil, nil
	}
	secret, ok := BearerSecret(authorization)
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
