package storagetest

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/parleyforum/parley/migrations"
	"github.com/parleyforum/parley/storage"
)

// sqliteURL names a database file in the test's own temporary folder: removed with the folder,
// after the cleanups registered later (closing the database) have run.
func sqliteURL(t testing.TB) string {
	t.Helper()
	return "sqlite:" + filepath.Join(t.TempDir(), "parley.db")
}

// The migrated SQLite database is made once per test process and copied for each test, as
// Postgres's template database is (postgres.go): migrating a fresh file runs every migration,
// hundreds of milliseconds under the race detector, for each of the suite's thousands of
// databases. A copy is a fresh database like any other — its own file, no rows of another
// test — that shares the template's cursor key, as Postgres's copies do.
var sqliteTemplate struct {
	once sync.Once
	dir  string // removed by Main
	path string
	err  error
}

// migratedSQLiteURL copies the migrated template into the test's temporary folder and names
// the copy.
func migratedSQLiteURL(t testing.TB) string {
	t.Helper()
	sqliteTemplate.once.Do(func() {
		sqliteTemplate.dir, sqliteTemplate.path, sqliteTemplate.err = makeSQLiteTemplate()
	})
	if sqliteTemplate.err != nil {
		t.Fatalf("storagetest: the migrated SQLite template: %v", sqliteTemplate.err)
	}
	path := filepath.Join(t.TempDir(), "parley.db")
	if err := copyFile(sqliteTemplate.path, path); err != nil {
		t.Fatalf("storagetest: copying the migrated SQLite template: %v", err)
	}
	return "sqlite:" + path
}

// makeSQLiteTemplate migrates a new database file and closes it, so that the file alone is the
// whole database.
func makeSQLiteTemplate() (dir, path string, err error) {
	if dir, err = os.MkdirTemp("", "parley-sqlite-template-"); err != nil {
		return "", "", err
	}
	path = filepath.Join(dir, "template.db")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	err = func() error {
		db, err := storage.Open(ctx, "sqlite:"+path)
		if err != nil {
			return err
		}
		if _, err := migrations.Up(ctx, db); err != nil {
			db.Close()
			return fmt.Errorf("migrating: %w", err)
		}
		// The last connection's close checkpoints the log into the file and removes it.
		return db.Close()
	}()
	if err == nil {
		err = wholeFile(path)
	}
	if err != nil {
		_ = os.RemoveAll(dir)
		return "", "", err
	}
	return dir, path, nil
}

// wholeFile checks that the closed database has nothing left in a log beside its file.
func wholeFile(path string) error {
	for _, side := range []string{"-wal", "-journal"} {
		if fi, err := os.Stat(path + side); err == nil && fi.Size() > 0 {
			return fmt.Errorf("%s holds %d bytes after the database was closed", filepath.Base(path+side), fi.Size())
		}
	}
	return nil
}

func copyFile(from, to string) error {
	src, err := os.Open(from)
	if err != nil {
		return err
	}
	defer src.Close()
	dst, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	if _, err := io.Copy(dst, src); err != nil {
		dst.Close()
		return err
	}
	return dst.Close()
}

// removeSQLiteTemplate removes the template's folder, if one was made.
func removeSQLiteTemplate() error {
	if sqliteTemplate.dir == "" {
		return nil
	}
	return os.RemoveAll(sqliteTemplate.dir)
}
