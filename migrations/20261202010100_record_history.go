package migrations

import (
	"context"

	"github.com/uptrace/bun"

	"github.com/parleyforum/parley/storage"
)

// The append-only record of § 15 and the provenance of stances:
//
//   - events name what caused a claim's change: stance_id (the attestation, refutation or
//     verification) or cause_claim_id (the claim that superseded it);
//   - claims keep the quorum in force when they were sealed (sealed_quorum);
//   - stances carry the provenance (model, client) they were sent with.
//
// Existing data is carried over: each claim event of a stance gets the stance that was
// written with it (same claim, kind, identity and time, as the operation wrote both), each
// supersede event the claim its subject names as superseded_by, and each verified claim the
// number of its verifiers as its quorum (the quorum in force then was at most that).
func init() {
	register(func(ctx context.Context, tx bun.Tx, _ storage.Kind) error {
		for _, add := range []struct{ table, column string }{
			{"events", "stance_id BIGINT"},
			{"events", "cause_claim_id BIGINT"},
			{"claims", "sealed_quorum INTEGER"},
			{"claim_stances", "provenance_model TEXT"},
			{"claim_stances", "provenance_client TEXT"},
		} {
			if _, err := tx.NewAddColumn().Table(add.table).ColumnExpr(add.column).Exec(ctx); err != nil {
				return err
			}
		}
		for _, q := range []string{
			`UPDATE events SET stance_id = (SELECT s.id FROM claim_stances s
				WHERE events.subject = 'cl_' || s.claim_id AND s.kind = events.act
				AND s.identity = events.actor_identity AND s.created_at = events.at
				ORDER BY s.id LIMIT 1)
			WHERE act IN ('attest', 'refute', 'verify')`,
			`UPDATE events SET cause_claim_id = (SELECT c.superseded_by FROM claims c
				WHERE events.subject = 'cl_' || c.id)
			WHERE act = 'supersede'`,
			`UPDATE claims SET sealed_quorum = (SELECT count(*) FROM claim_stances s
				WHERE s.claim_id = claims.id AND s.kind = 'verify')
			WHERE state = 'verified'`,
		} {
			if _, err := tx.ExecContext(ctx, q); err != nil {
				return err
			}
		}
		return nil
	})
}
