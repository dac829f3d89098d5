package storage

import (
	"context"
	"database/sql/driver"
	"time"

	"github.com/uptrace/bun"
)

// The artifact store of § 13: bytes kept in the database, keyed by the sha256 ref of their
// content. The database, not files beside it, so that an artifact and the evidence that
// names it are written and backed up together (parley backup, pg_dump), and every server
// of one Postgres database sees every artifact.

// Artifact is one stored artifact. Identity and CreatedAt are of its first upload.
type Artifact struct {
	bun.BaseModel `bun:"table:artifacts"`

	Ref       string    `bun:"ref,pk"`
	Size      int64     `bun:"size,notnull"`
	MediaType string    `bun:"media_type,notnull"`
	Content   []byte    `bun:"content,notnull"`
	Identity  string    `bun:"identity,notnull"`
	CreatedAt time.Time `bun:"created_at,notnull"`
}

// artifactInfoColumns are the columns of an artifact without its bytes.
var artifactInfoColumns = []string{"ref", "size", "media_type", "identity", "created_at"}

// PutArtifact stores an artifact unless its ref is stored already, and returns the stored
// one (the earlier upload's media type, when the same bytes came before). first runs in the
// same transaction before the artifact is written (the protocol counts the write there); its
// error rolls everything back. New bytes are charged to quota (chargeArtifact) before they are
// written, so that bytes over it are never written at all; bytes stored already cost nothing.
// It returns only once the bytes are durable: on Postgres a commit is (synchronous_commit, its
// default); on SQLite, whose other writes commit with synchronous NORMAL, this commit alone
// syncs the write-ahead log (synchronous FULL on the connection that commits it) — the
// writer's connection, in its turn, as every other write.
func (db *DB) PutArtifact(ctx context.Context, a *Artifact, quota ArtifactQuota, first func(ctx context.Context, f *Forum) error, then ...func(ctx context.Context, f *Forum, stored *Artifact) error) (*Artifact, error) {
	release, err := db.takeWriter(ctx)
	if err != nil {
		return nil, err
	}
	defer release()
	conn, err := db.writes.Conn(ctx)
	if err != nil {
		return nil, translate(err)
	}
	defer conn.Close()
	if db.kind == SQLite {
		if _, err := conn.ExecContext(ctx, "PRAGMA synchronous = FULL"); err != nil {
			return nil, translate(err)
		}
		// A connection whose setting cannot be put back is closed rather than reused.
		defer func() {
			if _, err := conn.ExecContext(context.WithoutCancel(ctx), "PRAGMA synchronous = NORMAL"); err != nil {
				_ = conn.Raw(func(any) error { return driver.ErrBadConn })
			}
		}()
	}
	stored := new(Artifact)
	err = runTx(ctx, conn, func(ctx context.Context, tx bun.Tx) error {
		if err := first(ctx, &Forum{db: db, q: tx, tx: tx.Tx}); err != nil {
			return err
		}
		if err := insertArtifact(ctx, tx, db.kind, a, quota); err != nil {
			return err
		}
		if err := tx.NewSelect().Model(stored).Column(artifactInfoColumns...).Where("ref = ?", a.Ref).Scan(ctx); err != nil {
			return err
		}
		for _, fn := range then {
			if err := fn(ctx, &Forum{db: db, q: tx, tx: tx.Tx}, stored); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, translate(err)
	}
	return stored, nil
}

// Artifact reads an artifact with its bytes.
func (f *Forum) Artifact(ctx context.Context, ref string) (*Artifact, error) {
	a := new(Artifact)
	err := f.q.NewSelect().Model(a).Where("ref = ?", ref).Scan(ctx)
	return a, translate(err)
}

// HasArtifact reports whether an artifact is stored.
func (f *Forum) HasArtifact(ctx context.Context, ref string) (bool, error) {
	ok, err := f.q.NewSelect().Model((*Artifact)(nil)).Where("ref = ?", ref).Exists(ctx)
	return ok, translate(err)
}
