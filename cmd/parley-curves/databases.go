package main

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/parleyforum/parley/migrations"
	"github.com/parleyforum/parley/storage"
	"github.com/parleyforum/parley/storage/storagetest/pgcluster"
)

// opener gives a fresh, migrated, empty database of the kind, and what removes it again.
type opener func(ctx context.Context, kind storage.Kind) (db *storage.DB, remove func() error, err error)

// forums makes the fresh databases the forums are seeded into: SQLite files in a folder of
// their own, Postgres databases on one server, each removed after its measurement so that a
// run holds one large forum at a time.
type forums struct {
	dir     string             // the SQLite files
	pgBase  *url.URL           // the Postgres server, nil when no Postgres is measured
	admin   *sql.DB            // for CREATE and DROP DATABASE
	cluster *pgcluster.Cluster // the server started for the run, nil when one was named
}

// newForums prepares the databases of the kinds: a Postgres server at pgURL, or a throwaway
// one when pgURL is empty, and a folder under tmp.
func newForums(ctx context.Context, kinds []storage.Kind, pgURL, tmp string) (*forums, error) {
	dir, err := os.MkdirTemp(tmp, "parley-curves-")
	if err != nil {
		return nil, err
	}
	f := &forums{dir: dir}
	for _, kind := range kinds {
		if kind != storage.Postgres {
			continue
		}
		if pgURL == "" {
			startCtx, cancel := context.WithTimeout(ctx, 2*time.Minute)
			f.cluster, err = pgcluster.Start(startCtx)
			cancel()
			if err != nil {
				_ = f.close()
				return nil, fmt.Errorf("cannot start Postgres (or name one with --postgres): %w", err)
			}
			pgURL = f.cluster.URL("postgres")
		}
		if f.pgBase, err = url.Parse(pgURL); err != nil {
			_ = f.close()
			return nil, fmt.Errorf("--postgres %s: %v", storage.Redact(pgURL), err)
		}
		cfg, err := pgx.ParseConfig(pgURL)
		if err != nil {
			_ = f.close()
			return nil, fmt.Errorf("--postgres %s: %v", storage.Redact(pgURL), err)
		}
		f.admin = stdlib.OpenDB(*cfg)
		if err := f.admin.PingContext(ctx); err != nil {
			_ = f.close()
			return nil, fmt.Errorf("cannot reach Postgres at %s: %v", storage.Redact(pgURL), err)
		}
	}
	return f, nil
}

// open is the forums' opener.
func (f *forums) open(ctx context.Context, kind storage.Kind) (*storage.DB, func() error, error) {
	name, err := randomName()
	if err != nil {
		return nil, nil, err
	}
	var rawURL string
	var drop func() error
	switch kind {
	case storage.SQLite:
		path := filepath.Join(f.dir, name+".db")
		rawURL = "sqlite:" + path
		drop = func() error {
			var errs []error
			for _, suffix := range []string{"", "-wal", "-shm"} {
				if err := os.Remove(path + suffix); err != nil && !errors.Is(err, os.ErrNotExist) {
					errs = append(errs, err)
				}
			}
			return errors.Join(errs...)
		}
	case storage.Postgres:
		if f.admin == nil {
			return nil, nil, errors.New("no Postgres server was prepared")
		}
		if _, err := f.admin.ExecContext(ctx, "CREATE DATABASE "+name); err != nil {
			return nil, nil, fmt.Errorf("creating database %s: %v", name, err)
		}
		u := *f.pgBase
		u.Path = "/" + name
		rawURL = u.String()
		drop = func() error {
			_, err := f.admin.ExecContext(context.Background(), "DROP DATABASE "+name+" WITH (FORCE)")
			return err
		}
	default:
		return nil, nil, fmt.Errorf("unknown database kind %q", kind)
	}
	db, err := storage.Open(ctx, rawURL)
	if err != nil {
		_ = drop()
		return nil, nil, err
	}
	remove := func() error { return errors.Join(db.Close(), drop()) }
	if _, err := migrations.Up(ctx, db); err != nil {
		_ = remove()
		return nil, nil, fmt.Errorf("migrating %s: %v", storage.Redact(rawURL), err)
	}
	return db, remove, nil
}

// close removes the folder and stops what newForums started.
func (f *forums) close() error {
	var errs []error
	if f.admin != nil {
		errs = append(errs, f.admin.Close())
	}
	if f.cluster != nil {
		errs = append(errs, f.cluster.Stop())
	}
	errs = append(errs, os.RemoveAll(f.dir))
	return errors.Join(errs...)
}

// randomName is a database name no other run uses: lower case, a valid SQL identifier.
func randomName() (string, error) {
	b := make([]byte, 6)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return "parley_curves_" + strings.ToLower(hex.EncodeToString(b)), nil
}
