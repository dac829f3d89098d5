package security

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"regexp"
	"strings"
	"testing"
)

// leakScanner checks an answer that refuses for what no answer may show (issue 10): a token
// secret, a token's hash as it is stored, or SQL and the databases' own error text.
type leakScanner struct {
	secrets []string // the secrets, and their SHA-256 in hex as the tokens table keeps them
}

// sqlText is what SQL or a database driver's error looks like; the words in capitals as SQL
// writes them (a message of Parley says "select" only in its own words).
var sqlText = regexp.MustCompile(`\b(SELECT|INSERT INTO|UPDATE \w+ SET|DELETE FROM|WHERE|RETURNING)\b|SQLSTATE|(?i)\bpq:|(?i)sqlite|(?i)pgx|(?i)pgconn|(?i)bun:|(?i)syntax error|(?i)constraint|(?i)relation "`)

func newLeakScanner(t testing.TB, s *server) *leakScanner {
	t.Helper()
	l := &leakScanner{}
	for _, secret := range s.secrets {
		sum := sha256.Sum256([]byte(secret))
		l.secrets = append(l.secrets, secret, hex.EncodeToString(sum[:]))
	}
	// The hash is the one stored: the tokens table finds the first secret's token by it.
	if _, err := s.db.TokenByHash(context.Background(), l.secrets[1]); err != nil {
		t.Fatalf("a token is not stored as the SHA-256 of its secret in hex: %v", err)
	}
	return l
}

func (l *leakScanner) check(t testing.TB, where string, raw []byte) {
	t.Helper()
	body := string(raw)
	for _, secret := range l.secrets {
		if strings.Contains(body, secret) {
			t.Errorf("%s: the answer shows a token or its hash %.12s…: %s", where, secret, clip(body, 300))
		}
	}
	if m := sqlText.FindString(body); m != "" {
		t.Errorf("%s: the answer shows SQL or the database's words (%q): %s", where, m, clip(body, 300))
	}
}
