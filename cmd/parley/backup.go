package main

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/parleyforum/parley/storage"
)

// runBackup writes a consistent copy of the SQLite database to FILE while the server runs.
// The database is copied as it is, not migrated: a backup must not change what it copies.
func runBackup(ctx context.Context, s *stdio, c *command, args []string) error {
	f := newFlags(s, c)
	positional, err := f.parse(args)
	if err != nil {
		return err
	}
	if len(positional) != 1 {
		return usagef("backup: name the one FILE to write (see parley help backup)")
	}
	path := positional[0]
	db, err := f.openAsItIs(ctx)
	if err != nil {
		return err
	}
	defer db.Close()
	if err := db.Backup(ctx, path); err != nil {
		if errors.Is(err, storage.ErrBackupNotSQLite) {
			return usagef("%v: pg_dump --format=custom --file FILE '%s'", err, db.URL())
		}
		return fmt.Errorf("backing up %s: %w", db.URL(), err)
	}
	info, err := os.Stat(path)
	if err != nil {
		return err
	}
	fmt.Fprintf(s.out, "backed up %s to %s (%d bytes)\n", db.URL(), path, info.Size())
	return nil
}
