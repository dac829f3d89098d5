package storage

import (
	"context"
	"errors"
	"time"

	"github.com/uptrace/bun"
)

// The public keys of the signed profile (PROTOCOL.md § 14): an identity's Ed25519 keys, with
// which it signs its stances.

// SigningKey is one registered public key; PublicKey is the base64 of its 32 bytes and DID
// its did:key, which one identity alone may hold. A key registered before § 14 that was weak,
// or held by another identity first, has no DID and signs nothing any more.
type SigningKey struct {
	bun.BaseModel `bun:"table:signing_keys"`

	ID        int64     `bun:"id,pk,autoincrement"`
	Identity  string    `bun:"identity,notnull"`
	PublicKey string    `bun:"public_key,notnull"`
	DID       *string   `bun:"did"`
	CreatedAt time.Time `bun:"created_at,notnull"`
	// Binding is the binding of a key imported from another realm, as that realm signed it
	// (JSON); nil for this forum's own keys, whose binding the realm key makes.
	Binding *string `bun:"binding"`
}

// RegisterKey stores identity's key unless it is registered already, and returns the
// stored key and whether this call created it. A key that another identity holds is
// ErrAlreadyExists.
func (f *Forum) RegisterKey(ctx context.Context, k *SigningKey) (*SigningKey, bool, error) {
	if k.DID != nil {
		held, err := f.KeyByDID(ctx, *k.DID)
		switch {
		case err == nil && held.Identity != k.Identity:
			return held, false, ErrAlreadyExists
		case err == nil:
			return held, false, nil
		case !errors.Is(err, ErrNotFound):
			return nil, false, err
		}
	}
	res, err := f.q.NewInsert().Model(k).On("CONFLICT (identity, public_key) DO NOTHING").Exec(ctx)
	if err != nil {
		return nil, false, translate(err)
	}
	n, _ := res.RowsAffected()
	stored := new(SigningKey)
	err = f.q.NewSelect().Model(stored).Where("identity = ?", k.Identity).Where("public_key = ?", k.PublicKey).Scan(ctx)
	return stored, n == 1, translate(err)
}

// ImportKey stores a key of another realm with the binding that realm signed, unless the
// same identity holds it already, and answers whether it stored it. A key that another identity holds is ErrAlreadyExists: a
// key speaks for one identity only, across realms too.
func (f *Forum) ImportKey(ctx context.Context, k *SigningKey) (*SigningKey, bool, error) {
	held, err := f.KeyByDID(ctx, *k.DID)
	switch {
	case err == nil && held.Identity != k.Identity:
		return held, false, ErrAlreadyExists
	case err == nil:
		return held, false, nil
	case !errors.Is(err, ErrNotFound):
		return nil, false, err
	}
	if _, err := f.q.NewInsert().Model(k).Returning("id").Exec(ctx); err != nil {
		return nil, false, translate(err)
	}
	return k, true, nil
}

// KeyByDID reads the key of a did:key, or ErrNotFound.
func (f *Forum) KeyByDID(ctx context.Context, did string) (*SigningKey, error) {
	k := new(SigningKey)
	err := f.q.NewSelect().Model(k).Where("did = ?", did).Scan(ctx)
	return k, translate(err)
}

// SigningKey reads one key.
func (f *Forum) SigningKey(ctx context.Context, id int64) (*SigningKey, error) {
	k := new(SigningKey)
	err := f.q.NewSelect().Model(k).Where("id = ?", id).Scan(ctx)
	return k, translate(err)
}

// KeysOf lists an identity's keys, oldest first.
func (f *Forum) KeysOf(ctx context.Context, identity string) ([]SigningKey, error) {
	out := []SigningKey{}
	err := f.q.NewSelect().Model(&out).Where("identity = ?", identity).Order("id").Scan(ctx)
	return out, translate(err)
}

// KeysByID reads the keys with these ids, by id.
func (f *Forum) KeysByID(ctx context.Context, ids []int64) (map[int64]*SigningKey, error) {
	out := map[int64]*SigningKey{}
	if len(ids) == 0 {
		return out, nil
	}
	var keys []SigningKey
	if err := f.q.NewSelect().Model(&keys).Where("id IN (?)", bun.In(ids)).Scan(ctx); err != nil {
		return nil, translate(err)
	}
	for i := range keys {
		out[keys[i].ID] = &keys[i]
	}
	return out, nil
}
