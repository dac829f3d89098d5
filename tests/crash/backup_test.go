package crash

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/parleyforum/parley/storage"
	"github.com/parleyforum/parley/storage/storagetest"
)

// A backup taken while the server takes writes restores, by the steps of docs/operating.md
// (stop the server, put the backup in the database's place, start), to a database that
// holds together: every message acknowledged before the backup began is in it whole, every
// thread's count is its messages and its events replay to its state.
func TestBackupUnderWriteLoadRestores(t *testing.T) {
	dbURL := storagetest.NewURL(t, storage.SQLite)
	dbPath := strings.TrimPrefix(dbURL, "sqlite:")
	dir := t.TempDir()
	tokens := make([]string, identities)
	for i := range tokens {
		tokens[i] = createToken(t, dir, dbURL, "backup-"+string(rune('a'+i)))
	}

	srv := startServe(t, dir, dbURL)
	load := startLoad(t, srv.base, tokens)
	load.waitForAcks(100, killAfter)
	before := load.acknowledged()
	backup := filepath.Join(dir, "parley-backup.db")
	cmd := exec.Command(parleyBinary, "backup", backup, "--db", dbURL)
	cmd.Dir, cmd.Env = dir, serverEnv()
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("parley backup: %v: %s", err, out)
	}
	load.waitForAcks(50, 2*time.Second) // the load goes on after the backup
	load.stop()
	after := load.acknowledged()
	srv.stop()
	if len(before) < 20 || len(after) <= len(before) {
		t.Fatalf("%d messages acknowledged before the backup, %d in all: the load did not run across it", len(before), len(after))
	}
	t.Logf("backup after %d acknowledged messages, of %d in all: %s", len(before), len(after), strings.TrimSpace(string(out)))

	// Restore: the database and its WAL files make way for the backup.
	for _, suffix := range []string{"", "-wal", "-shm"} {
		if err := os.Remove(dbPath + suffix); err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
	}
	if err := os.Rename(backup, dbPath); err != nil {
		t.Fatal(err)
	}
	srv = startServe(t, dir, dbURL)
	checkAcknowledged(t, srv.base, tokens[0], before)
	checkEveryThread(t, dbURL)
	srv.stop()
}

// The backup refuses to overwrite a file, and names pg_dump for Postgres.
func TestBackupRefusals(t *testing.T) {
	dir := t.TempDir()
	existing := filepath.Join(dir, "taken.db")
	if err := os.WriteFile(existing, []byte("keep me"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		db, file, want string
		status         int
	}{
		{db: storagetest.NewURL(t, storage.SQLite), file: existing, want: "never overwrites", status: 1},
		{db: storagetest.NewURL(t, storage.Postgres), file: filepath.Join(dir, "pg.db"), want: "pg_dump", status: 2},
	} {
		cmd := exec.Command(parleyBinary, "backup", c.file, "--db", c.db)
		cmd.Dir, cmd.Env = dir, serverEnv()
		out, err := cmd.CombinedOutput()
		ee, ok := err.(*exec.ExitError)
		if !ok || ee.ExitCode() != c.status || !strings.Contains(string(out), c.want) {
			t.Errorf("parley backup %s on %s: %v %q, want status %d and %q", c.file, c.db, err, out, c.status, c.want)
		}
	}
	if b, _ := os.ReadFile(existing); string(b) != "keep me" {
		t.Errorf("the existing file was changed to %q", b)
	}
}
