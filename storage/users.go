package storage

import (
	"context"

	"github.com/uptrace/bun"
)

// CreateUser stores a human account. passwordHash is the encoded hash of the password, never
// the password. A name that is taken is ErrAlreadyExists.
func (db *DB) CreateUser(ctx context.Context, name, passwordHash string) (*User, error) {
	return db.insertUser(ctx, db.DB, &User{Name: name, PasswordHash: passwordHash, CreatedAt: Now()})
}

// CreateAdmin stores a human account that is an administrator.
func (db *DB) CreateAdmin(ctx context.Context, name, passwordHash string) (*User, error) {
	return db.insertUser(ctx, db.DB, &User{Name: name, PasswordHash: passwordHash, Admin: true, CreatedAt: Now()})
}

func (db *DB) insertUser(ctx context.Context, q bun.IDB, u *User) (*User, error) {
	if _, err := q.NewInsert().Model(u).Returning("id").Exec(ctx); err != nil {
		return nil, translate(err)
	}
	return u, nil
}

// CreateFirstUser stores the first account, an administrator, only while there is none:
// of two setup forms sent at once, one wins and the other gets ErrAlreadyExists.
func (db *DB) CreateFirstUser(ctx context.Context, name, passwordHash string) (*User, error) {
	var u *User
	err := db.Write(ctx, func(ctx context.Context, f *Forum) error {
		if db.kind == Postgres {
			// Two transactions that both count none would both insert: one waits here.
			if _, err := f.q.ExecContext(ctx, "LOCK TABLE users IN EXCLUSIVE MODE"); err != nil {
				return err
			}
		}
		n, err := f.q.NewSelect().Model((*User)(nil)).Count(ctx)
		if err != nil {
			return err
		}
		if n > 0 {
			return ErrAlreadyExists
		}
		u, err = db.insertUser(ctx, f.q, &User{Name: name, PasswordHash: passwordHash, Admin: true, CreatedAt: Now()})
		return err
	})
	if err != nil {
		return nil, translate(err)
	}
	return u, nil
}

// UserByName finds the account called name, or ErrNotFound.
func (db *DB) UserByName(ctx context.Context, name string) (*User, error) {
	u := new(User)
	if err := db.NewSelect().Model(u).Where("name = ?", name).Scan(ctx); err != nil {
		return nil, translate(err)
	}
	return u, nil
}

// Users lists every human account, oldest first.
func (db *DB) Users(ctx context.Context) ([]User, error) {
	users := []User{}
	if err := db.NewSelect().Model(&users).Order("id").Scan(ctx); err != nil {
		return nil, translate(err)
	}
	return users, nil
}

// CountUsers counts the human accounts: none means the instance still waits for its setup.
func (db *DB) CountUsers(ctx context.Context) (int, error) {
	n, err := db.NewSelect().Model((*User)(nil)).Count(ctx)
	return int(n), translate(err)
}
