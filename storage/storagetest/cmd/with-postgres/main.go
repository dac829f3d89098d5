// Command with-postgres runs a command beside a throwaway Postgres server: it starts one
// cluster, names it in PARLEY_TEST_POSTGRES for the command, runs the command, stops the
// cluster, and exits with the command's status. `go test ./...` runs every package in a
// process of its own; under with-postgres they share one server instead of starting one each:
//
//	go run ./storage/storagetest/cmd/with-postgres -- go test ./...
//
// When PARLEY_TEST_POSTGRES is already set, the command runs against that server and no
// cluster is started.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"syscall"
	"time"

	"github.com/parleyforum/parley/storage/storagetest/pgcluster"
)

// envPostgres is storagetest.EnvPostgres (a test keeps them equal); not imported, so that
// this command does not link the testing package and all of storage.
const envPostgres = "PARLEY_TEST_POSTGRES"

// killAfter is how long the command may take to exit after a signal was passed on to it,
// before it is killed: the cluster must be stopped before with-postgres itself gives up.
const killAfter = 15 * time.Second

func main() {
	os.Exit(run(os.Args[1:]))
}

func run(args []string) int {
	if len(args) > 0 && args[0] == "--" {
		args = args[1:]
	}
	if len(args) == 0 {
		fmt.Fprintln(os.Stderr, "usage: with-postgres [--] COMMAND [ARG...]")
		return 2
	}
	if os.Getenv(envPostgres) != "" {
		return runCommand(args, nil)
	}

	begin := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	cluster, err := pgcluster.Start(ctx)
	cancel()
	if errors.Is(err, pgcluster.ErrNotInstalled) {
		fmt.Fprintf(os.Stderr, "with-postgres: no Postgres found: install postgresql or set %s (%v)\n", envPostgres, err)
		return 1
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "with-postgres: cannot start Postgres (or set %s to use a running one): %v\n", envPostgres, err)
		return 1
	}
	url := cluster.URL("postgres")
	fmt.Fprintf(os.Stderr, "with-postgres: Postgres %s started in %.2fs in %s: %s=%s\n",
		cluster.Version, time.Since(begin).Seconds(), cluster.Dir(), envPostgres, url)

	code := runCommand(args, []string{envPostgres + "=" + url})

	if err := cluster.Stop(); err != nil {
		fmt.Fprintf(os.Stderr, "with-postgres: %v\n", err)
		if code == 0 {
			code = 1
		}
	}
	return code
}

// runCommand runs the command with extra environment variables and returns its exit status.
// SIGINT and SIGTERM are passed on to it rather than ending with-postgres, so that the cluster
// is stopped after the command has ended.
func runCommand(args, env []string) int {
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr

	signals := make(chan os.Signal, 2)
	signal.Notify(signals, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(signals)

	if err := cmd.Start(); err != nil {
		fmt.Fprintf(os.Stderr, "with-postgres: %v\n", err)
		return 127
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()

	var kill <-chan time.Time
	for {
		select {
		case sig := <-signals:
			_ = cmd.Process.Signal(sig)
			if kill == nil {
				kill = time.After(killAfter)
			}
		case <-kill:
			fmt.Fprintf(os.Stderr, "with-postgres: %s did not exit %v after the signal; killing it\n", args[0], killAfter)
			_ = cmd.Process.Kill()
		case err := <-done:
			return exitStatus(err)
		}
	}
}

func exitStatus(err error) int {
	if err == nil {
		return 0
	}
	var exit *exec.ExitError
	if !errors.As(err, &exit) {
		fmt.Fprintf(os.Stderr, "with-postgres: %v\n", err)
		return 1
	}
	if ws, ok := exit.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return exit.ExitCode()
}
