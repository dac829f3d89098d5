package storage

import (
	"context"
	"errors"
)

// The settings Parley keeps for itself.
const (
	// SettingSessionKey is the secret the pages sign their session cookies with, generated on
	// first start unless the operator gives one.
	SettingSessionKey = "session_key"
	// SettingSetupCode is the one-time code of the setup address, valid while no user exists.
	SettingSetupCode = "setup_code"
	// SettingRealmKey is the seed of the realm's Ed25519 key (PROTOCOL.md § 14), the standard
	// base64 of its 32 bytes, generated on first start and shared by every instance.
	SettingRealmKey = "realm_key"
	// SettingCursorKey signs every cursor the server hands out (protocol/cursor.go), the
	// standard base64 of 32 random bytes, made by its migration and shared by every instance.
	SettingCursorKey = "cursor_key"
)

// Setting reads one setting, or ErrNotFound.
func (db *DB) Setting(ctx context.Context, key string) (string, error) {
	s := new(Setting)
	if err := db.NewSelect().Model(s).Where("key = ?", key).Scan(ctx); err != nil {
		return "", translate(err)
	}
	return s.Value, nil
}

// SetSetting writes one setting, replacing any value it had.
func (db *DB) SetSetting(ctx context.Context, key, value string) error {
	_, err := db.NewInsert().Model(&Setting{Key: key, Value: value}).
		On("CONFLICT (key) DO UPDATE").
		Set("value = EXCLUDED.value").
		Exec(ctx)
	return translate(err)
}

// SettingOrCreate reads one setting and, when it is missing, stores the value that create
// makes. Of several processes that race to create the same setting exactly one wins, and all
// of them return the winner's value: two servers started at once on one database end up with
// the same session key. created tells whether this call stored the value.
func (db *DB) SettingOrCreate(ctx context.Context, key string, create func() (string, error)) (value string, created bool, err error) {
	value, err = db.Setting(ctx, key)
	if !errors.Is(err, ErrNotFound) {
		return value, false, err
	}
	fresh, err := create()
	if err != nil {
		return "", false, err
	}
	res, err := db.NewInsert().Model(&Setting{Key: key, Value: fresh}).
		On("CONFLICT (key) DO NOTHING").
		Exec(ctx)
	if err != nil {
		return "", false, translate(err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return "", false, translate(err)
	} else if n == 1 {
		return fresh, true, nil
	}
	// Another process stored it between our read and our insert: its value counts.
	value, err = db.Setting(ctx, key)
	return value, false, err
}

// DeleteSetting removes one setting; removing a missing one is not an error, because the
// outcome asked for (no such setting) holds either way.
func (db *DB) DeleteSetting(ctx context.Context, key string) error {
	_, err := db.NewDelete().Model((*Setting)(nil)).Where("key = ?", key).Exec(ctx)
	return translate(err)
}
