package migrations

import (
	"context"
	"time"

	"github.com/uptrace/bun"

	"github.com/parleyforum/parley/storage"
)

// The signed profile (PROTOCOL.md § 13): the Ed25519 public keys an identity registers, and
// on each attestation or verification the signature it was sent with — the key, the at
// exactly as sent (it is part of the signed bytes) and the signature. This model is a
// frozen copy: never edit it, add a migration instead.

type signedKey struct {
	bun.BaseModel `bun:"table:signing_keys"`

	ID        int64     `bun:"id,pk,autoincrement"`
	Identity  string    `bun:"identity,notnull"`
	PublicKey string    `bun:"public_key,notnull"`
	CreatedAt time.Time `bun:"created_at,notnull"`
}

func init() {
	register(func(ctx context.Context, tx bun.Tx, kind storage.Kind) error {
		if _, err := tx.NewCreateTable().Model((*signedKey)(nil)).Exec(ctx); err != nil {
			return err
		}
		// The same key twice for one identity is one key (PUT /v1/keys is idempotent).
		if _, err := tx.NewCreateIndex().Model((*signedKey)(nil)).Index("signing_keys_identity_key_idx").
			Unique().Column("identity", "public_key").Exec(ctx); err != nil {
			return err
		}
		for _, column := range []string{
			"signature_key_id BIGINT REFERENCES signing_keys (id)",
			"signature_at VARCHAR",
			"signature VARCHAR",
		} {
			if _, err := tx.NewAddColumn().Table("claim_stances").ColumnExpr(column).Exec(ctx); err != nil {
				return err
			}
		}
		return nil
	})
}
