package migrations

import (
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"strings"

	"github.com/uptrace/bun"

	"github.com/parleyforum/parley/signed"
	"github.com/parleyforum/parley/storage"
)

// Signed stances version 2 (PROTOCOL.md § 14):
//   - every key gets its did:key (did), unique: a key speaks for one identity only. Keys
//     registered before are carried over: a key stored with white space around its base64
//     is stored without it; a key of small order, or one that another identity registered
//     first, keeps no did, so that nothing can be signed with it any more (its old
//     signatures stay checkable);
//   - a key imported from another realm keeps that realm's binding (binding, JSON);
//   - a stance keeps the proof it was signed with (proof, JSON) and its key (proof_key_id).
//
// Frozen copy of the key model; never edit it.
type keyDID struct {
	bun.BaseModel `bun:"table:signing_keys"`

	ID        int64   `bun:"id,pk"`
	Identity  string  `bun:"identity"`
	PublicKey string  `bun:"public_key"`
	DID       *string `bun:"did"`
}

func init() {
	register(func(ctx context.Context, tx bun.Tx, _ storage.Kind) error {
		for _, column := range []string{"did VARCHAR", "binding VARCHAR"} {
			if _, err := tx.NewAddColumn().Table("signing_keys").ColumnExpr(column).Exec(ctx); err != nil {
				return err
			}
		}
		for _, column := range []string{"proof VARCHAR", "proof_key_id BIGINT REFERENCES signing_keys (id)"} {
			if _, err := tx.NewAddColumn().Table("claim_stances").ColumnExpr(column).Exec(ctx); err != nil {
				return err
			}
		}
		var keys []keyDID
		if err := tx.NewSelect().Model(&keys).Order("id").Scan(ctx); err != nil {
			return err
		}
		held := map[string]bool{}
		taken := map[[2]string]bool{}
		for _, k := range keys {
			taken[[2]string{k.Identity, k.PublicKey}] = true
		}
		for _, k := range keys {
			raw, err := base64.StdEncoding.DecodeString(strings.TrimSpace(k.PublicKey))
			if err != nil {
				continue
			}
			canonical := base64.StdEncoding.EncodeToString(raw)
			q := tx.NewUpdate().Model((*keyDID)(nil)).Where("id = ?", k.ID)
			changed := false
			if canonical != k.PublicKey && !taken[[2]string{k.Identity, canonical}] {
				taken[[2]string{k.Identity, canonical}] = true
				q = q.Set("public_key = ?", canonical)
				changed = true
			}
			if signed.CheckPublicKey(raw) == nil {
				did := signed.DIDKey(ed25519.PublicKey(raw))
				if !held[did] {
					held[did] = true
					q = q.Set("did = ?", did)
					changed = true
				}
			}
			if changed {
				if _, err := q.Exec(ctx); err != nil {
					return err
				}
			}
		}
		_, err := tx.NewCreateIndex().Model((*keyDID)(nil)).Index("signing_keys_did_idx").Unique().Column("did").Exec(ctx)
		return err
	})
}
