package web

import (
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/parleyforum/parley/storage"
)

// Logins are limited in the database, so that every instance on it counts the same
// attempts (as writes_per_minute is): per client address, and per account AND client
// address. An attempt is counted before its password is checked, so that parallel attempts
// cannot outrun their limit; one that succeeds is taken back, with the account's failures
// from that address. Failures from one address never lock the account for another: its
// owner signs in from theirs while a guesser is refused at their own (OWASP ASVS 2.2.1).
const (
	loginWindow          = 15 * time.Minute
	loginFailsPerAccount = 10 // per account and client address
	loginFailsPerAddr    = 30
	loginNameMaxChars    = 64
)

// loginAttempt is one login's counted attempts, to take back when it succeeds (or when it
// was never checked).
type loginAttempt struct {
	db       *storage.DB
	keys     []string
	at       time.Time
	retryMax time.Time // when refused: when the limit frees up
}

// loginKeys are the keys a login from addr for name counts under; a name over the length
// limit counts under its address alone.
func loginKeys(addr, name string) []string {
	keys := []string{"login:addr:" + addr}
	if name != "" && len([]rune(name)) <= loginNameMaxChars {
		keys = append(keys, "login:acct:"+strconv.Quote(name)+"@"+addr)
	}
	return keys
}

// countLogin counts an attempt under each key before the password is checked. ok is false
// when one of the limits is reached: then retry names when it frees up, and nothing stays
// counted for the refused attempt.
func countLogin(ctx context.Context, db *storage.DB, addr, name string) (a *loginAttempt, ok bool, err error) {
	a = &loginAttempt{db: db, at: storage.Now()}
	for _, key := range loginKeys(addr, name) {
		limit := loginFailsPerAddr
		if key != "login:addr:"+addr {
			limit = loginFailsPerAccount
		}
		free, counted, err := db.CountAttempt(ctx, key, a.at, loginWindow, limit)
		if err != nil {
			a.takeBack()
			return nil, false, err
		}
		if !counted {
			a.takeBack()
			a.retryMax = free
			return a, false, nil
		}
		a.keys = append(a.keys, key)
	}
	return a, true, nil
}

// takeBack removes the attempt: it was not a failure (never checked, or the password was
// right).
// It has a bounded context of its own: the request's may be over.
func (a *loginAttempt) takeBack() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	for _, key := range a.keys {
		_ = a.db.ForgetAttempt(ctx, key, a.at)
	}
	a.keys = nil
}

// succeeded takes the attempt back and clears the account's failures from this address.
func (a *loginAttempt) succeeded() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	for _, key := range a.keys {
		if strings.HasPrefix(key, "login:acct:") {
			_ = a.db.ForgetAttempt(ctx, key, time.Time{})
		}
	}
	a.takeBack()
}

// retryAfter is the whole seconds until a refused login may be tried again.
func (a *loginAttempt) retryAfter() int {
	return max(1, int((time.Until(a.retryMax)+time.Second-1)/time.Second))
}
