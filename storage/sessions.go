package storage

import (
	"context"
	"time"

	"github.com/uptrace/bun"
)

// The pages' server-side sessions (web/session.go): a row per signed-in browser, found by
// the hash of the id its cookie carries. A session ends when its row is deleted — at sign
// out, at a password change, by "sign out everywhere", by an administrator or by
// `parley user signout` — and from then on its cookie signs nobody in, wherever it was copied.

// NewSession is a session to store: the hash of its id, never the id.
type NewSession struct {
	Hash      string
	Agent     string
	ExpiresAt time.Time
}

// CreateSession stores a session of the user; the user's expired sessions go at the same
// time, so that the table holds no more than the sessions that can still sign someone in.
func (db *DB) CreateSession(ctx context.Context, userID int64, ns NewSession) (*Session, error) {
	var s *Session
	err := db.Tx(ctx, func(ctx context.Context, tx bun.Tx) error {
		var err error
		s, err = insertSession(ctx, tx, userID, ns)
		return err
	})
	if err != nil {
		return nil, translate(err)
	}
	return s, nil
}

func insertSession(ctx context.Context, tx bun.Tx, userID int64, ns NewSession) (*Session, error) {
	now := Now()
	if _, err := tx.NewDelete().Model((*Session)(nil)).
		Where("user_id = ?", userID).Where("expires_at <= ?", now).Exec(ctx); err != nil {
		return nil, err
	}
	s := &Session{Hash: ns.Hash, UserID: userID, Agent: ns.Agent, CreatedAt: now, ExpiresAt: ns.ExpiresAt}
	if _, err := tx.NewInsert().Model(s).Returning("id").Exec(ctx); err != nil {
		return nil, err
	}
	return s, nil
}

// SessionByHash finds a session that has not expired with its human, in one query; a
// session that ended, expired or never was is ErrNotFound.
func (db *DB) SessionByHash(ctx context.Context, hash string) (*Session, error) {
	s := new(Session)
	err := db.NewSelect().Model(s).Relation("User").
		Where("s.hash = ?", hash).Where("s.expires_at > ?", Now()).Scan(ctx)
	if err != nil {
		return nil, translate(err)
	}
	return s, nil
}

// RenewSession moves a session's expiry to until.
func (db *DB) RenewSession(ctx context.Context, id int64, until time.Time) error {
	_, err := db.NewUpdate().Model((*Session)(nil)).Set("expires_at = ?", until).Where("id = ?", id).Exec(ctx)
	return translate(err)
}

// Sessions lists the user's sessions that have not expired, newest first.
func (db *DB) Sessions(ctx context.Context, userID int64) ([]Session, error) {
	list := []Session{}
	err := db.NewSelect().Model(&list).Where("user_id = ?", userID).Where("expires_at > ?", Now()).
		Order("id DESC").Scan(ctx)
	return list, translate(err)
}

// EndSession ends the session with this hash; ending one that is gone is not an error (the
// outcome asked for holds).
func (db *DB) EndSession(ctx context.Context, hash string) error {
	_, err := db.NewDelete().Model((*Session)(nil)).Where("hash = ?", hash).Exec(ctx)
	return translate(err)
}

// EndSessionOf ends the user's session numbered id; a number that is not one of the user's
// sessions is ErrNotFound, so that nobody ends another's session by its number.
func (db *DB) EndSessionOf(ctx context.Context, userID, id int64) error {
	res, err := db.NewDelete().Model((*Session)(nil)).Where("id = ?", id).Where("user_id = ?", userID).Exec(ctx)
	if err != nil {
		return translate(err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return translate(err)
	} else if n == 0 {
		return ErrNotFound
	}
	return nil
}

// EndSessions ends every session of the user and counts them.
func (db *DB) EndSessions(ctx context.Context, userID int64) (int, error) {
	res, err := db.NewDelete().Model((*Session)(nil)).Where("user_id = ?", userID).Exec(ctx)
	if err != nil {
		return 0, translate(err)
	}
	n, err := res.RowsAffected()
	return int(n), translate(err)
}

// ChangePassword stores the user's new password hash, ends every session of the user and
// starts the one given (the browser that changed the password carries on), all in one
// transaction: no session from before the change survives it.
func (db *DB) ChangePassword(ctx context.Context, userID int64, passwordHash string, fresh NewSession) (*Session, error) {
	var s *Session
	err := db.Tx(ctx, func(ctx context.Context, tx bun.Tx) error {
		res, err := tx.NewUpdate().Model((*User)(nil)).Set("password_hash = ?", passwordHash).Where("id = ?", userID).Exec(ctx)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil {
			return err
		} else if n == 0 {
			return ErrNotFound
		}
		if _, err := tx.NewDelete().Model((*Session)(nil)).Where("user_id = ?", userID).Exec(ctx); err != nil {
			return err
		}
		s, err = insertSession(ctx, tx, userID, fresh)
		return err
	})
	if err != nil {
		return nil, translate(err)
	}
	return s, nil
}
