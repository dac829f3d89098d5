package storage

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// ErrBackupNotSQLite says that Backup copies only the embedded database: a Postgres server
// has its own tools for a consistent copy (pg_dump), which know its every object.
var ErrBackupNotSQLite = errors.New("parley backup copies the embedded SQLite database; for Postgres use pg_dump (docs/operating.md, Backups)")

// Backup writes a consistent copy of the SQLite database to path while others go on reading
// and writing it: VACUUM INTO copies one read transaction's snapshot, which WAL mode takes
// without stopping writers. The copy is written beside path under a temporary name, synced
// and then renamed, so that path appears only whole; an existing path is never overwritten.
func (db *DB) Backup(ctx context.Context, path string) error {
	if db.kind != SQLite {
		return ErrBackupNotSQLite
	}
	if strings.HasSuffix(db.url, ":memory:") {
		return errors.New("an in-memory database cannot be backed up from another process")
	}
	if _, err := os.Lstat(path); err == nil {
		return fmt.Errorf("%s exists; a backup never overwrites a file", path)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".partial-")
	if err != nil {
		return fmt.Errorf("cannot write beside %s: %v", path, err)
	}
	tmpPath := tmp.Name()
	// VACUUM INTO writes only into a file that does not exist or is empty.
	_ = tmp.Close()
	defer os.Remove(tmpPath) // after a successful rename there is nothing left to remove
	if _, err := db.ExecContext(ctx, "VACUUM INTO ?", tmpPath); err != nil {
		return fmt.Errorf("copying the database: %w", translate(err))
	}
	if err := syncFile(tmpPath); err != nil {
		return err
	}
	if err := os.Link(tmpPath, path); err != nil { // unlike rename, never replaces path
		return fmt.Errorf("cannot put the backup at %s: %v", path, err)
	}
	return syncFile(filepath.Dir(path))
}

// syncFile makes what was written to a file, or the names in a folder, durable.
func syncFile(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	err = f.Sync()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("cannot sync %s: %v", path, err)
	}
	return nil
}
