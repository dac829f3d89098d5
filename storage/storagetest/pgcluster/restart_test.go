package pgcluster

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"
)

// TestRestartKeepsCommittedRows restarts a durable cluster both ways: it comes back on the
// same port with fsync on, and a row committed before an immediate stop is still there.
func TestRestartKeepsCommittedRows(t *testing.T) {
	ctx := context.Background()
	c, err := StartWith(ctx, Options{Durable: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Stop() })
	exec := func(sql string) {
		t.Helper()
		conn, err := pgx.Connect(ctx, c.URL("postgres"))
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close(ctx)
		if _, err := conn.Exec(ctx, sql); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}
	exec("CREATE TABLE kept (n int)")
	for i, mode := range []RestartMode{RestartFast, RestartImmediate} {
		exec("INSERT INTO kept VALUES (1)")
		port := c.Port
		if err := c.Restart(ctx, mode); err != nil {
			t.Fatalf("restart %s: %v", mode, err)
		}
		if c.Port != port {
			t.Errorf("restart %s: port %d, was %d", mode, c.Port, port)
		}
		conn, err := pgx.Connect(ctx, c.URL("postgres"))
		if err != nil {
			t.Fatalf("after restart %s: %v", mode, err)
		}
		var rows int
		var fsync string
		if err := conn.QueryRow(ctx, "SELECT count(*), current_setting('fsync') FROM kept").Scan(&rows, &fsync); err != nil {
			t.Fatal(err)
		}
		_ = conn.Close(ctx)
		if rows != i+1 || fsync != "on" {
			t.Errorf("after restart %s: %d rows and fsync %s, want %d and on", mode, rows, fsync, i+1)
		}
	}
	if err := c.Restart(ctx, "sideways"); err == nil {
		t.Error("an unknown mode restarted the server")
	}
}
