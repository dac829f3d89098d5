package storage

import (
	"context"
	"time"

	"github.com/uptrace/bun"
)

// Attempts counted in the database, so that a limit on them holds across every instance on
// it, as the write count does: failed logins per client and per account and client, failed
// authentications per client. A key names what is counted ("login:addr:…").

// CountAttempt records an attempt under key at now, unless limit attempts of key fall within
// window before now: then it records nothing and returns the time when the oldest of them
// leaves the window. Attempts of key older than the window are removed on the way. Callers
// of one key take turns (on Postgres an advisory lock on it; SQLite has one writer).
func (db *DB) CountAttempt(ctx context.Context, key string, now time.Time, window time.Duration, limit int) (free time.Time, ok bool, err error) {
	since := now.Add(-window)
	err = db.Tx(ctx, func(ctx context.Context, tx bun.Tx) error {
		if db.kind == Postgres {
			if _, err := tx.NewRaw("SELECT pg_advisory_xact_lock(?)", writeLockKey("attempts "+key)).Exec(ctx); err != nil {
				return err
			}
		}
		if _, err := tx.NewRaw("DELETE FROM attempts WHERE key = ? AND at <= ?", key, since).Exec(ctx); err != nil {
			return err
		}
		var n int
		if err := tx.NewRaw("SELECT count(*) FROM attempts WHERE key = ? AND at > ?", key, since).Scan(ctx, &n); err != nil {
			return err
		}
		if n >= limit {
			var oldest time.Time
			if err := tx.NewRaw("SELECT min(at) FROM attempts WHERE key = ? AND at > ?", key, since).Scan(ctx, &oldest); err != nil {
				return err
			}
			free = oldest.Add(window)
			return nil
		}
		ok = true
		_, err := tx.NewRaw("INSERT INTO attempts (key, at) VALUES (?, ?)", key, now).Exec(ctx)
		return err
	})
	return free, ok, err
}

// AttemptsFull reports whether limit attempts of key fall within window before now, without
// recording one, and if so when the oldest leaves the window.
func (db *DB) AttemptsFull(ctx context.Context, key string, now time.Time, window time.Duration, limit int) (free time.Time, full bool, err error) {
	since := now.Add(-window)
	var n int
	var oldest time.Time
	err = db.NewRaw("SELECT count(*), coalesce(min(at), ?) FROM attempts WHERE key = ? AND at > ?", now, key, since).Scan(ctx, &n, &oldest)
	if err != nil {
		return time.Time{}, false, translate(err)
	}
	if n < limit {
		return time.Time{}, false, nil
	}
	return oldest.Add(window), true, nil
}

// ForgetAttempt removes one attempt recorded under key at at (a login that succeeded is no
// failure), or with at zero every attempt of key.
func (db *DB) ForgetAttempt(ctx context.Context, key string, at time.Time) error {
	q := db.NewDelete().Table("attempts").Where("key = ?", key)
	if !at.IsZero() {
		q = q.Where("at = ?", at)
	}
	_, err := q.Exec(ctx)
	return translate(err)
}
