//go:build resources

package resources

import (
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// callerKind is a kind of caller: each row is called by the weakest kind that may call it.
type callerKind int

const (
	anonymous  callerKind = iota // no token, no session (the pages are read with --public-read)
	reader                       // an agent's token with the right read
	writer                       // read, write
	locker                       // read, write, lock
	verifier                     // read, write, verify
	human                        // a human's token (every right), not an administrator
	admin                        // a token of an administrator
	member                       // a human signed in to the pages, not an administrator
	adminPages                   // an administrator signed in to the pages
	// signingOut is a member signed in anew for each call, an account of its own: the rows
	// that end sessions.
	signingOut
	// passwordHolder is a human whose account keeps Parley's own argon2id cost: the rows that
	// check or set a password.
	passwordHolder
)

func (k callerKind) String() string {
	return [...]string{"anonymous", "read token", "write token", "lock token", "verify token",
		"human's token", "administrator's token", "member (pages)", "administrator (pages)",
		"member (pages), signed in anew", "member (pages) with Parley's password cost"}[k]
}

// caller is one caller of a request: its credentials as the request carries them.
type caller struct {
	kind          callerKind
	i             int
	authorization string
	cookie, csrf  string // a page session's cookie and CSRF token
	name          string // the account of a human on the pages
}

// session is a human signed in to the pages.
type session struct{ cookie, csrf string }

// callerOf is the i-th caller of kind: each i is another identity or account.
func (f *forum) callerOf(t *testing.T, s *server, kind callerKind, i int) caller {
	c := caller{kind: kind, i: i}
	switch kind {
	case anonymous:
	case member, adminPages:
		name := "member-"
		if kind == adminPages {
			name = "admin-"
		}
		f.mu.Lock()
		defer f.mu.Unlock()
		if f.sessions[kind] == nil {
			f.sessions[kind] = map[int]session{}
		}
		sess, ok := f.sessions[kind][i]
		if !ok {
			sess = signIn(t, s, name+strconv.Itoa(i))
			f.sessions[kind][i] = sess
		}
		c.cookie, c.csrf, c.name = sess.cookie, sess.csrf, name+strconv.Itoa(i)
	case signingOut:
		c.name = "leaver-" + strconv.Itoa(i)
		sess := signIn(t, s, c.name)
		c.cookie, c.csrf = sess.cookie, sess.csrf
	case passwordHolder:
		c.name = "login-" + strconv.Itoa(i)
		sess := signIn(t, s, c.name)
		c.cookie, c.csrf = sess.cookie, sess.csrf
	default:
		c.authorization = "Bearer " + f.secrets[kind][i]
	}
	return c
}

var csrfInput = regexp.MustCompile(`name="csrf"[^>]*value="([^"]+)"|value="([^"]+)"[^>]*name="csrf"`)

// signIn signs name in through the login form and returns the session.
func signIn(t *testing.T, s *server, name string) session {
	t.Helper()
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	client := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	csrfOf := func(path string) string {
		resp, err := client.Get(s.base + path)
		if err != nil {
			t.Fatalf("GET %s: %v", path, err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		m := csrfInput.FindSubmatch(body)
		if m == nil {
			t.Fatalf("GET %s: %d, no CSRF token in\n%.500s", path, resp.StatusCode, body)
		}
		return string(m[1]) + string(m[2])
	}
	resp, err := client.PostForm(s.base+"/login", url.Values{"name": {name}, "password": {thePassword}, "csrf": {csrfOf("/login")}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("signing in as %s: %d", name, resp.StatusCode)
	}
	csrf := csrfOf("/account")
	u, _ := url.Parse(s.base)
	var cookies []string
	for _, ck := range jar.Cookies(u) {
		cookies = append(cookies, ck.Name+"="+ck.Value)
	}
	return session{cookie: strings.Join(cookies, "; "), csrf: csrf}
}
