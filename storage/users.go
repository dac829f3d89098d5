package storage

import "context"

// CreateUser stores a human account. passwordHash is the encoded hash of the password, never
// the password. A name that is taken is ErrAlreadyExists.
func (db *DB) CreateUser(ctx context.Context, name, passwordHash string) (*User, error) {
	u := &User{Name: name, PasswordHash: passwordHash, CreatedAt: Now()}
	if _, err := db.NewInsert().Model(u).Returning("id").Exec(ctx); err != nil {
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

// CountUsers counts the human accounts: none means the instance still waits for its setup.
func (db *DB) CountUsers(ctx context.Context) (int, error) {
	n, err := db.NewSelect().Model((*User)(nil)).Count(ctx)
	return int(n), translate(err)
}
