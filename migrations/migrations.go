// Package migrations holds Parley's schema history and applies it. See README.md beside this
// file for the rules every migration follows.
package migrations

import (
	"context"
	"fmt"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"time"

	"github.com/uptrace/bun"

	"github.com/parleyforum/parley/storage"
)

// Migration is one forward-only step of the schema. Up runs inside the transaction that also
// records the step as applied, so a step is either wholly applied or not at all.
type Migration struct {
	Version string // the timestamp at the start of the file name, e.g. 20261201060000
	Name    string // the rest of the file name, e.g. core
	Up      func(ctx context.Context, tx bun.Tx, kind storage.Kind) error
}

var registered []Migration

// register adds the migration defined in the calling file, named after that file.
func register(up func(ctx context.Context, tx bun.Tx, kind storage.Kind) error) {
	_, file, _, ok := runtime.Caller(1)
	if !ok {
		panic("migrations: cannot name the migration")
	}
	base := strings.TrimSuffix(filepath.Base(file), ".go")
	version, name, found := strings.Cut(base, "_")
	if !found || len(version) != 14 {
		panic(fmt.Sprintf("migrations: file %s is not named YYYYMMDDHHMMSS_name.go", base))
	}
	for _, m := range registered {
		if m.Version == version {
			panic(fmt.Sprintf("migrations: version %s registered twice", version))
		}
	}
	registered = append(registered, Migration{Version: version, Name: name, Up: up})
	sort.Slice(registered, func(i, j int) bool { return registered[i].Version < registered[j].Version })
}

// execEach runs the statements in order in tx, stopping at the first that fails.
func execEach(ctx context.Context, tx bun.Tx, stmts ...string) error {
	for _, stmt := range stmts {
		if _, err := tx.ExecContext(ctx, stmt); err != nil {
			return err
		}
	}
	return nil
}

// All lists every known migration, oldest first.
func All() []Migration { return append([]Migration(nil), registered...) }

// applied is the bookkeeping table's row.
type applied struct {
	bun.BaseModel `bun:"table:schema_migrations"`

	Version   string    `bun:"version,pk"`
	Name      string    `bun:"name,notnull"`
	AppliedAt time.Time `bun:"applied_at,notnull"`
}

// Status is one migration with the time it was applied (nil while pending).
type Status struct {
	Version   string
	Name      string
	AppliedAt *time.Time
}

// Up applies every pending migration in order and returns the ones it applied. Several
// processes may call it at once: on Postgres an advisory lock queues them, on SQLite the
// write lock does, and each re-checks inside its transaction what is already applied.
func Up(ctx context.Context, db *storage.DB) ([]Migration, error) { return upTo(ctx, db, "") }

// upTo is Up of the migrations up to version last and none after it ("": all of them).
func upTo(ctx context.Context, db *storage.DB, last string) ([]Migration, error) {
	var done []Migration
	for _, m := range registered {
		if last != "" && m.Version > last {
			break
		}
		ran := false
		err := db.Tx(ctx, func(ctx context.Context, tx bun.Tx) error {
			if err := prepare(ctx, tx, db.Kind()); err != nil {
				return err
			}
			exists, err := tx.NewSelect().Model((*applied)(nil)).Where("version = ?", m.Version).Exists(ctx)
			if err != nil || exists {
				return err
			}
			if err := m.Up(ctx, tx, db.Kind()); err != nil {
				return fmt.Errorf("migration %s_%s: %w", m.Version, m.Name, err)
			}
			row := &applied{Version: m.Version, Name: m.Name, AppliedAt: time.Now().UTC()}
			if _, err := tx.NewInsert().Model(row).Exec(ctx); err != nil {
				return err
			}
			ran = true
			return nil
		})
		if err != nil {
			return done, err
		}
		if ran {
			done = append(done, m)
		}
	}
	return done, nil
}

// StatusOf lists every migration, applied or pending, and names applied versions that this
// binary does not know (a database migrated by a newer Parley).
func StatusOf(ctx context.Context, db *storage.DB) (list []Status, unknown []string, err error) {
	var rows []applied
	err = db.Tx(ctx, func(ctx context.Context, tx bun.Tx) error {
		if err := prepare(ctx, tx, db.Kind()); err != nil {
			return err
		}
		return tx.NewSelect().Model(&rows).Order("version").Scan(ctx)
	})
	if err != nil {
		return nil, nil, err
	}
	at := map[string]time.Time{}
	for _, r := range rows {
		at[r.Version] = r.AppliedAt
	}
	known := map[string]bool{}
	for _, m := range registered {
		known[m.Version] = true
		s := Status{Version: m.Version, Name: m.Name}
		if t, ok := at[m.Version]; ok {
			t := t
			s.AppliedAt = &t
		}
		list = append(list, s)
	}
	for _, r := range rows {
		if !known[r.Version] {
			unknown = append(unknown, r.Version+"_"+r.Name)
		}
	}
	return list, unknown, nil
}

// Pending counts the migrations not yet applied.
func Pending(ctx context.Context, db *storage.DB) (int, error) {
	list, _, err := StatusOf(ctx, db)
	n := 0
	for _, s := range list {
		if s.AppliedAt == nil {
			n++
		}
	}
	return n, err
}

// prepare takes the migration lock and makes sure the bookkeeping table exists.
func prepare(ctx context.Context, tx bun.Tx, kind storage.Kind) error {
	if kind == storage.Postgres {
		// A migration is no request: it may take as long as it needs, whatever statement
		// timeout the server's connections have.
		if _, err := tx.ExecContext(ctx, "SET LOCAL statement_timeout = 0"); err != nil {
			return err
		}
		// One fixed key: only Parley's migrations take it.
		if _, err := tx.ExecContext(ctx, "SELECT pg_advisory_xact_lock(7261201)"); err != nil {
			return err
		}
	}
	_, err := tx.NewCreateTable().Model((*applied)(nil)).IfNotExists().Exec(ctx)
	return err
}
