package web

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"net/http"
	"strings"
	"time"
	"unicode"

	"github.com/gofiber/fiber/v2"
	"github.com/gorilla/sessions"
)

// The pages' sessions: a gorilla/sessions cookie, signed (HMAC-SHA256) and encrypted
// (AES-256), HttpOnly, SameSite=Lax, Secure behind TLS. Both keys are derived from the one
// session key (--session-key, or generated once and kept in the database), so that a restart
// keeps everyone signed in and a new key signs everyone out.
//
// Who is signed in is kept on the server: the cookie carries a random session id, never the
// human's name, and the session is a row of the database (storage/sessions.go) that holds the
// id's SHA-256. Ending the row — sign out, a password change, "sign out everywhere", an
// administrator, `parley user signout` — ends the session for every copy of its cookie.
// Beside the id the cookie keeps only what concerns the browser: its CSRF token, its
// language and a token secret waiting for the one page that shows it.

const (
	sessionCookie = "parley_session"
	sessionMaxAge = 14 * 24 * 60 * 60 // two weeks; each visit that changes the session renews it
)

// The values a session keeps: only strings, so that gob needs no registered types.
const (
	sessID         = "sid"  // the random id of the server-side session, while signed in
	sessCSRF       = "csrf" // the token every POST must carry
	sessLang       = "lang" // the language chosen with ?lang=
	sessSecret     = "secret"
	sessSecretID   = "secret_id"
	sessSecretWhom = "secret_identity"
)

// newSessionStore makes the cookie store from the session key; an empty key (tests, and
// embedders that give none) means a random one for this process.
func newSessionStore(key string) *sessions.CookieStore {
	if key == "" {
		key = randomToken()
	}
	store := sessions.NewCookieStore(derive(key, "parley session signature"), derive(key, "parley session encryption"))
	store.Options = &sessions.Options{Path: "/", MaxAge: sessionMaxAge, HttpOnly: true, SameSite: http.SameSiteLaxMode}
	store.MaxAge(sessionMaxAge)
	return store
}

// derive makes a 32-byte key for one purpose from the session key.
func derive(key, purpose string) []byte {
	m := hmac.New(sha256.New, []byte(key))
	m.Write([]byte(purpose))
	return m.Sum(nil)
}

// randomToken is 256 random bits, URL-safe.
func randomToken() string {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		panic(err) // crypto/rand does not fail on supported systems
	}
	return base64.RawURLEncoding.EncodeToString(b)
}

// loadSession reads the session from the request's cookie; a missing, forged, expired or
// undecodable cookie gives a new, empty session.
func loadSession(store *sessions.CookieStore, c *fiber.Ctx) *sessions.Session {
	r := &http.Request{Header: http.Header{}}
	if cookie := c.Get(fiber.HeaderCookie); cookie != "" {
		r.Header.Set(fiber.HeaderCookie, cookie)
	}
	s, err := store.New(r, sessionCookie)
	if err != nil {
		s.Values = map[any]any{}
		s.IsNew = true
	}
	return s
}

// saveSession writes the session's cookie into the answer.
func saveSession(store *sessions.CookieStore, c *fiber.Ctx, s *sessions.Session) error {
	s.Options.Secure = c.Protocol() == "https"
	w := headerWriter{}
	if err := store.Save(&http.Request{}, w, s); err != nil {
		return err
	}
	for _, v := range w[fiber.HeaderSetCookie] {
		c.Response().Header.Add(fiber.HeaderSetCookie, v)
	}
	return nil
}

// headerWriter collects the headers gorilla/sessions sets; it takes nothing else.
type headerWriter http.Header

func (w headerWriter) Header() http.Header         { return http.Header(w) }
func (w headerWriter) Write(b []byte) (int, error) { return len(b), nil }
func (w headerWriter) WriteHeader(int)             {}

// sessionHash is what the database keeps of a session id: its SHA-256, so that a copy of the
// sessions table signs nobody in.
func sessionHash(id string) string {
	sum := sha256.Sum256([]byte(id))
	return hex.EncodeToString(sum[:])
}

// sessionAgentMaxChars bounds the browser's description kept with a session.
const sessionAgentMaxChars = 120

// sessionAgent is the User-Agent kept with a session, to tell a human's sessions apart on the
// account page: printable characters only, shortened.
func sessionAgent(ua string) string {
	var b strings.Builder
	n := 0
	for _, r := range ua {
		if n == sessionAgentMaxChars {
			b.WriteString("…")
			break
		}
		if unicode.IsPrint(r) {
			b.WriteRune(r)
			n++
		}
	}
	return b.String()
}

// sessionLifetime is how long a session lasts after its cookie was last written: the
// cookie's own max age, so that the row and the cookie expire together.
const sessionLifetime = sessionMaxAge * time.Second

// str reads a string value of the session.
func str(s *sessions.Session, key string) string {
	v, _ := s.Values[key].(string)
	return v
}

// sameToken compares two CSRF tokens in constant time; an empty one never matches.
func sameToken(a, b string) bool {
	return a != "" && b != "" && subtle.ConstantTimeCompare([]byte(a), []byte(b)) == 1
}
