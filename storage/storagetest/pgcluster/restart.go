package pgcluster

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// RestartMode is how pg_ctl stops the server before it starts it again.
type RestartMode string

const (
	// RestartFast ends open sessions and shuts down cleanly (a checkpoint, then exit).
	RestartFast RestartMode = "fast"
	// RestartImmediate quits at once, without a checkpoint: the next start recovers from the
	// write-ahead log, as after a crash of the server.
	RestartImmediate RestartMode = "immediate"
)

// Restart stops the server in the given mode and starts it again on the same port (pg_ctl
// restart reuses the options of the last start), returning once it accepts connections.
// Connections open before are ended; clients must reconnect.
func (c *Cluster) Restart(ctx context.Context, mode RestartMode) error {
	if mode != RestartFast && mode != RestartImmediate {
		return fmt.Errorf("unknown restart mode %q", mode)
	}
	out, err := c.run("pg_ctl", "restart", "--pgdata", c.dataDir(), "--log", c.logFile(),
		"--mode="+string(mode), "--wait", "--timeout=60")
	if err != nil {
		return fmt.Errorf("pg_ctl restart --mode=%s failed: %v\n%s\n%s", mode, err, out, c.logTail())
	}
	return c.waitReady(ctx)
}

// MakeDurable turns on what a throwaway cluster turns off — fsync, synchronous commit and
// full-page writes — and restarts the server so they hold: a commit is acknowledged only once
// it is on disk, as on a production server. Tests that kill the server (an immediate
// restart) need it: without synchronous commit, a commit acknowledged to the client may still
// be in the server's memory when it quits, and is lost by design.
func (c *Cluster) MakeDurable(ctx context.Context) error {
	settings := []string{
		"",
		"# Durable, as a production server: acknowledged commits survive an immediate stop.",
		"fsync = on",
		"synchronous_commit = on",
		"full_page_writes = on",
	}
	f, err := os.OpenFile(filepath.Join(c.dataDir(), "postgresql.conf"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		return fmt.Errorf("cannot configure Postgres: %v", err)
	}
	_, werr := f.WriteString(strings.Join(settings, "\n") + "\n")
	if err := f.Close(); werr == nil {
		werr = err
	}
	if werr != nil {
		return fmt.Errorf("cannot configure Postgres: %v", werr)
	}
	return c.Restart(ctx, RestartFast)
}
