// Command parley-soak runs a Parley server for minutes under mixed agents over HTTP and MCP
// while Postgres restarts, the server is killed and clients walk away mid-request, then checks
// the database against every acknowledged write and reports the server's memory over time.
// It exits 1 when the check finds a problem. `make soak` builds and runs it.
//
//	parley-soak [--duration 10m] [--agents 16] [--db postgres|sqlite] [--faults LIST]
//	            [--fault-every 30s] [--walkaway-every 3s] [--parley bin/parley]
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/parleyforum/parley/tests/soak"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stdout, os.Stderr))
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("parley-soak", flag.ContinueOnError)
	fs.SetOutput(stderr)
	duration := durationDefault(10 * time.Minute)
	fs.DurationVar(&duration, "duration", duration, "how long the agents work (default from SOAK_DURATION, else 10m)")
	agents := fs.Int("agents", 16, "agents at once, alternately over HTTP and MCP")
	db := fs.String("db", soak.Postgres, "postgres (a durable cluster of its own) or sqlite (server kills only)")
	faults := fs.String("faults", "", "faults in turn, comma-separated: pg-fast, pg-immediate, kill; none for none (default: every one the database allows)")
	faultEvery := fs.Duration("fault-every", 30*time.Second, "time between two faults")
	walkEvery := fs.Duration("walkaway-every", 3*time.Second, "time between two clients that walk away mid-request (0: none)")
	parley := fs.String("parley", "bin/parley", "the parley binary to serve")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	cfg := soak.Config{Parley: *parley, Database: *db, Duration: duration, Agents: *agents,
		FaultEvery: *faultEvery, AbandonEvery: *walkEvery, Log: stderr}
	if *faults != "" {
		var err error
		if cfg.Faults, err = soak.ParseFaults(*faults); err != nil {
			fmt.Fprintf(stderr, "parley-soak: %v\n", err)
			return 2
		}
	}
	if abs, err := filepath.Abs(cfg.Parley); err == nil {
		cfg.Parley = abs
	}
	dir, err := os.MkdirTemp("", "parley-soak-")
	if err != nil {
		fmt.Fprintf(stderr, "parley-soak: %v\n", err)
		return 2
	}
	defer os.RemoveAll(dir)
	cfg.Dir = dir
	report, err := soak.Run(ctx, cfg)
	if err != nil {
		fmt.Fprintf(stderr, "parley-soak: %v\n", err)
		return 2
	}
	report.Print(stdout)
	if !report.OK() {
		return 1
	}
	return 0
}

// durationDefault reads SOAK_DURATION (a Go duration: 90s, 10m), else d.
func durationDefault(d time.Duration) time.Duration {
	if v := os.Getenv("SOAK_DURATION"); v != "" {
		if parsed, err := time.ParseDuration(v); err == nil && parsed > 0 {
			return parsed
		}
	}
	return d
}
