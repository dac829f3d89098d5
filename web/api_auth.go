package web

import (
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/parleyforum/parley/protocol"
)

// authenticate finds the actor behind "Authorization: Bearer <token>" (§ 10). Without the
// header the actor is nil, and the operation answers unauthenticated where it needs a token
// (the manifest does not). A header that is sent is always checked: a malformed, unknown or
// revoked token is unauthenticated on every route, the manifest included, so that a client
// with a wrong token learns it at once instead of reading an anonymous answer.
func (a *api) authenticate(c *fiber.Ctx) (*protocol.Actor, error) {
	header := strings.TrimSpace(c.Get(fiber.HeaderAuthorization))
	if header == "" {
		return nil, nil
	}
	secret, ok := bearer(header)
	if !ok {
		return nil, protocol.Refuse(protocol.ReasonUnauthenticated, `the Authorization header must be "Bearer <token>"`)
	}
	return a.svc.Authenticate(c.UserContext(), secret)
}

// bearer reads the secret of "Bearer <secret>"; the scheme is case-insensitive (RFC 9110
// § 11.1) and the secret is one word.
func bearer(header string) (string, bool) {
	scheme, secret, found := strings.Cut(header, " ")
	secret = strings.TrimSpace(secret)
	if !found || !strings.EqualFold(scheme, "Bearer") || secret == "" || strings.ContainsAny(secret, " \t") {
		return "", false
	}
	return secret, true
}
