package storage

import (
	"context"
	"time"

	"github.com/uptrace/bun"
)

// The public keys of the signed profile (§ 13): an identity's Ed25519 keys, with which it
// signs attestations and verifications.

// SigningKey is one registered public key; PublicKey is the base64 of its 32 bytes.
type SigningKey struct {
	bun.BaseModel `bun:"table:signing_keys"`

	ID        int64     `bun:"id,pk,autoincrement"`
	Identity  string    `bun:"identity,notnull"`
	PublicKey string    `bun:"public_key,notnull"`
	CreatedAt time.Time `bun:"created_at,notnull"`
}

// RegisterKey stores identity's key unless it is registered already, and returns the
// stored key and whether this call created it.
func (f *Forum) RegisterKey(ctx context.Context, k *SigningKey) (*SigningKey, bool, error) {
	res, err := f.q.NewInsert().Model(k).On("CONFLICT (identity, public_key) DO NOTHING").Exec(ctx)
	if err != nil {
		return nil, false, translate(err)
	}
	n, _ := res.RowsAffected()
	stored := new(SigningKey)
	err = f.q.NewSelect().Model(stored).Where("identity = ?", k.Identity).Where("public_key = ?", k.PublicKey).Scan(ctx)
	return stored, n == 1, translate(err)
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
