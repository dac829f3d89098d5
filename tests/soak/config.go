// Package soak runs Parley for minutes under mixed agents over HTTP and MCP while the
// database restarts, the server is killed and clients walk away mid-request, and then checks
// the database against every write the server acknowledged: nothing lost, nothing twice,
// every thread's events replaying to its state, every counter matching, and the server's
// memory flat. cmd/parley-soak is its command line; `make soak` runs it.
package soak

import (
	"fmt"
	"io"
	"strings"
	"time"
)

// Fault is a failure of the server or its database that the run causes at intervals.
type Fault string

const (
	// RestartPostgresFast is pg_ctl restart -m fast: sessions ended, a clean shutdown.
	RestartPostgresFast Fault = "pg-fast"
	// RestartPostgresImmediate is pg_ctl restart -m immediate: Postgres quits as in a crash
	// and recovers from its write-ahead log.
	RestartPostgresImmediate Fault = "pg-immediate"
	// KillServer is SIGKILL to parley serve, then a new parley serve on the same address.
	KillServer Fault = "kill"
)

// Database names the kinds of database a run can use.
const (
	Postgres = "postgres"
	SQLite   = "sqlite"
)

// Config is one run.
type Config struct {
	Parley       string        // the parley binary
	Database     string        // Postgres (a durable cluster of its own) or SQLite (a file)
	Duration     time.Duration // how long agents keep starting work
	Agents       int           // agents at once, alternately over HTTP and MCP
	FaultEvery   time.Duration // between two faults of Faults, taken in turn
	Faults       []Fault       // nil: every fault the database allows
	AbandonEvery time.Duration // between two clients that walk away mid-request (0: none)
	Dir          string        // a folder for the SQLite file and the server's working folder
	Log          io.Writer     // progress, one line per fault
}

// DefaultFaults are the faults a database allows: SQLite is a file in the server's process,
// so only the server can be killed.
func DefaultFaults(database string) []Fault {
	if database == SQLite {
		return []Fault{KillServer}
	}
	return []Fault{RestartPostgresFast, KillServer, RestartPostgresImmediate, KillServer}
}

// ParseFaults reads a comma-separated list of faults; "none" is no fault.
func ParseFaults(s string) ([]Fault, error) {
	if s == "none" {
		return []Fault{}, nil
	}
	var faults []Fault
	for _, f := range strings.Split(s, ",") {
		switch fault := Fault(strings.TrimSpace(f)); fault {
		case RestartPostgresFast, RestartPostgresImmediate, KillServer:
			faults = append(faults, fault)
		default:
			return nil, fmt.Errorf("unknown fault %q (want %s, %s, %s or none)", f, RestartPostgresFast, RestartPostgresImmediate, KillServer)
		}
	}
	return faults, nil
}

func (c *Config) check() error {
	switch {
	case c.Parley == "":
		return fmt.Errorf("no parley binary given")
	case c.Database != Postgres && c.Database != SQLite:
		return fmt.Errorf("database %q: want %s or %s", c.Database, Postgres, SQLite)
	case c.Duration <= 0:
		return fmt.Errorf("duration %v: want more than 0", c.Duration)
	case c.Agents < 2:
		return fmt.Errorf("%d agents: want at least 2 (agents answer each other)", c.Agents)
	case c.FaultEvery <= 0 && len(c.Faults) > 0:
		return fmt.Errorf("faults every %v: want more than 0", c.FaultEvery)
	case c.AbandonEvery < 0:
		return fmt.Errorf("abandoned clients every %v: want 0 or more", c.AbandonEvery)
	}
	for _, f := range c.Faults {
		if c.Database == SQLite && f != KillServer {
			return fmt.Errorf("fault %s needs Postgres", f)
		}
	}
	return nil
}
