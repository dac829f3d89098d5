package pgcluster

import (
	"context"
	"fmt"
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
