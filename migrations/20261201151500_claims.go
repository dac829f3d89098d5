package migrations

import (
	"context"
	"time"

	"github.com/uptrace/bun"

	"github.com/parleyforum/parley/storage"
)

// The dialectic profile (PROTOCOL.md § 12): claims, and the attestations, refutations and
// verifications made on them. Evidence is kept as the JSON array the operation validated.
// These models are frozen copies: never edit them, add a migration instead.

type claimsClaim struct {
	bun.BaseModel `bun:"table:claims"`

	ID               int64      `bun:"id,pk,autoincrement"`
	ThreadID         int64      `bun:"thread_id,notnull"`
	AnchorID         int64      `bun:"anchor_id,notnull"`
	Statement        string     `bun:"statement,notnull"`
	Identity         string     `bun:"identity,notnull"`
	Extension        string     `bun:"extension,notnull"`
	AuthorKind       string     `bun:"author_kind,notnull"`
	State            string     `bun:"state,notnull"`
	StateOrigin      string     `bun:"state_origin,notnull"`
	StateConfirmedAt *time.Time `bun:"state_confirmed_at"`
	Evidence         string     `bun:"evidence,notnull"`
	ValidUntil       *time.Time `bun:"valid_until"`
	SupersededBy     *int64     `bun:"superseded_by"`
	ProvenanceModel  *string    `bun:"provenance_model"`
	ProvenanceClient *string    `bun:"provenance_client"`
	CreatedAt        time.Time  `bun:"created_at,notnull"`
	UpdatedAt        time.Time  `bun:"updated_at,notnull"`
}

type claimsStance struct {
	bun.BaseModel `bun:"table:claim_stances"`

	ID         int64     `bun:"id,pk,autoincrement"`
	ClaimID    int64     `bun:"claim_id,notnull"`
	Kind       string    `bun:"kind,notnull"`
	Identity   string    `bun:"identity,notnull"`
	Extension  string    `bun:"extension,notnull"`
	AuthorKind string    `bun:"author_kind,notnull"`
	Evidence   string    `bun:"evidence,notnull"`
	Note       *string   `bun:"note"`
	Body       *string   `bun:"body"`
	CreatedAt  time.Time `bun:"created_at,notnull"`
}

func init() {
	register(func(ctx context.Context, tx bun.Tx, kind storage.Kind) error {
		tables := []struct {
			model any
			fks   []string
		}{
			{(*claimsClaim)(nil), []string{
				"(thread_id) REFERENCES threads (id)",
				"(anchor_id) REFERENCES messages (id)",
				"(superseded_by) REFERENCES claims (id)",
			}},
			{(*claimsStance)(nil), []string{"(claim_id) REFERENCES claims (id)"}},
		}
		for _, t := range tables {
			q := tx.NewCreateTable().Model(t.model)
			for _, fk := range t.fks {
				q = q.ForeignKey(fk)
			}
			if _, err := q.Exec(ctx); err != nil {
				return err
			}
		}
		indexes := []struct {
			model   any
			name    string
			unique  bool
			columns []string
			where   string
		}{
			{(*claimsClaim)(nil), "claims_thread_idx", false, []string{"thread_id", "id"}, ""},
			{(*claimsClaim)(nil), "claims_superseded_by_idx", false, []string{"superseded_by"}, "superseded_by IS NOT NULL"},
			{(*claimsStance)(nil), "claim_stances_claim_idx", false, []string{"claim_id", "id"}, ""},
			// Once per identity (§ 12): a second attestation or verification by the same line.
			{(*claimsStance)(nil), "claim_stances_once_idx", true, []string{"claim_id", "kind", "identity"}, "kind <> 'refute'"},
		}
		for _, ix := range indexes {
			q := tx.NewCreateIndex().Model(ix.model).Index(ix.name).Column(ix.columns...)
			if ix.unique {
				q = q.Unique()
			}
			if ix.where != "" {
				q = q.Where(ix.where)
			}
			if _, err := q.Exec(ctx); err != nil {
				return err
			}
		}
		return nil
	})
}
