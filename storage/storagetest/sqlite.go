package storagetest

import (
	"path/filepath"
	"testing"
)

// sqliteURL names a database file in the test's own temporary folder: removed with the folder,
// after the cleanups registered later (closing the database) have run.
func sqliteURL(t testing.TB) string {
	t.Helper()
	return "sqlite:" + filepath.Join(t.TempDir(), "parley.db")
}
