package storage

import (
	"context"
	"fmt"

	"github.com/uptrace/bun"
)

// Artifact quotas: the bytes of stored artifacts, kept as running totals in artifact_usage —
// a row per identity (the bytes of the artifacts it stored first) and the row wholeStore (the
// bytes of every artifact) — so that a put reads two rows, never the store. A put charges
// both rows with a conditional UPDATE, one statement each that reads and adds: on Postgres the
// row stays locked until the put's transaction ends and a concurrent put of the same row waits
// for it, then re-reads the committed total before its own condition is decided; on SQLite one
// writer at a time runs. So two puts that fit alone but not together never both commit, on one
// instance or on many.

// wholeStore is the artifact_usage row of the whole store; no identity is empty.
const wholeStore = ""

// ArtifactQuota bounds the bytes of stored artifacts: of each identity's and of all.
type ArtifactQuota struct {
	PerIdentity int64
	Total       int64
}

// ArtifactQuotaExceeded refuses new bytes that do not fit: Used of Limit bytes are stored,
// either by the identity (Total false) or in the whole store (Total true).
type ArtifactQuotaExceeded struct {
	Total       bool
	Used, Limit int64
}

func (e *ArtifactQuotaExceeded) Error() string {
	whose := "the identity's"
	if e.Total {
		whose = "the store's"
	}
	return fmt.Sprintf("storage: %s artifacts take %d of %d bytes", whose, e.Used, e.Limit)
}

// insertArtifact writes a, charged to its identity and the whole store, unless its ref is
// stored already. On Postgres puts of one ref take turns (an advisory lock on it) before they
// look, so that a put of bytes another put is storing waits for that one's commit and then
// finds them stored: it costs nothing, and is never refused for a quota the bytes do not add
// to. On SQLite the look comes after every commit before it: one writer at a time.
func insertArtifact(ctx context.Context, tx bun.Tx, kind Kind, a *Artifact, quota ArtifactQuota) error {
	if kind == Postgres {
		if _, err := tx.NewRaw("SELECT pg_advisory_xact_lock(?)", writeLockKey("artifact "+a.Ref)).Exec(ctx); err != nil {
			return err
		}
	}
	stored, err := tx.NewSelect().Model((*Artifact)(nil)).Where("ref = ?", a.Ref).Exists(ctx)
	if err != nil || stored {
		return err
	}
	if err := chargeArtifact(ctx, tx, a.Identity, a.Size, quota); err != nil {
		return err
	}
	_, err = tx.NewInsert().Model(a).Exec(ctx)
	return err
}

// chargeArtifact adds size bytes to identity's and the whole store's totals, or returns
// *ArtifactQuotaExceeded and adds nothing when either would pass its quota. The identity's
// row comes first, the store's second, in every put: puts wait for each other in one order.
func chargeArtifact(ctx context.Context, tx bun.Tx, identity string, size int64, quota ArtifactQuota) error {
	res, err := tx.NewRaw(`INSERT INTO artifact_usage (identity, bytes) SELECT ?, ? WHERE ? <= ?
		ON CONFLICT (identity) DO UPDATE SET bytes = artifact_usage.bytes + excluded.bytes
		WHERE artifact_usage.bytes + excluded.bytes <= ?`,
		identity, size, size, quota.PerIdentity, quota.PerIdentity).Exec(ctx)
	if err != nil {
		return err
	}
	if n, err := res.RowsAffected(); err != nil || n == 0 {
		return exceeded(ctx, tx, err, identity, false, quota.PerIdentity)
	}
	res, err = tx.NewRaw("UPDATE artifact_usage SET bytes = bytes + ? WHERE identity = ? AND bytes + ? <= ?",
		size, wholeStore, size, quota.Total).Exec(ctx)
	if err != nil {
		return err
	}
	if n, err := res.RowsAffected(); err != nil || n == 0 {
		return exceeded(ctx, tx, err, wholeStore, true, quota.Total)
	}
	return nil
}

// exceeded is the refusal of a charge that did not fit into row's quota, with what the row
// holds (err, when the charge's outcome could not be read).
func exceeded(ctx context.Context, tx bun.Tx, err error, row string, total bool, limit int64) error {
	if err != nil {
		return err
	}
	var used int64
	if err := tx.NewRaw("SELECT coalesce(max(bytes), 0) FROM artifact_usage WHERE identity = ?", row).Scan(ctx, &used); err != nil {
		return err
	}
	return &ArtifactQuotaExceeded{Total: total, Used: used, Limit: limit}
}

// ArtifactUsage reads the bytes of the artifacts identity stored first, and of all.
func (f *Forum) ArtifactUsage(ctx context.Context, identity string) (mine, all int64, err error) {
	err = f.q.NewRaw(`SELECT coalesce(sum(CASE WHEN identity = ? THEN bytes END), 0),
		coalesce(sum(CASE WHEN identity = ? THEN bytes END), 0) FROM artifact_usage`, identity, wholeStore).Scan(ctx, &mine, &all)
	return mine, all, translate(err)
}
