package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/parleyforum/parley/storage/storagetest/pgcluster"
)

// launch starts what --launch asks for: a throwaway database — a Postgres cluster with fsync
// and synchronous commit on, as in production, or a SQLite folder — holding the server's
// database and the baselines' own, in /dev/shm where it has room unless --launch-on-disk, and `parley serve` on a free loopback port with a writes
// limit the load does not reach. It points c at them. stop ends the server (SIGTERM, then
// SIGKILL after 10 s) and removes the database; it is safe after a failed launch too.
func launch(ctx context.Context, c *config, stderr io.Writer) (stop func(), err error) {
	var stops []func()
	stop = func() {
		for i := len(stops) - 1; i >= 0; i-- {
			stops[i]()
		}
	}
	parent := ""
	if !c.onDisk {
		if info, err := os.Stat("/dev/shm"); err == nil && info.IsDir() {
			parent = "/dev/shm"
		}
	}
	dir, err := os.MkdirTemp(parent, "parley-load-")
	if err != nil {
		return stop, err
	}
	stops = append(stops, func() { _ = os.RemoveAll(dir) })

	if c.launchDB == "sqlite" {
		c.db = "sqlite:" + filepath.Join(dir, "parley.db")
		c.baselineDB = "sqlite:" + filepath.Join(dir, "baseline.db")
		fmt.Fprintf(stderr, "parley-load: SQLite databases in %s\n", dir)
	} else {
		cluster, err := pgcluster.StartWith(ctx, pgcluster.Options{Durable: true, OnDisk: c.onDisk, Settings: []string{
			// Statements per send, counted by the meter (meter.go): a few µs per statement.
			"shared_preload_libraries = 'pg_stat_statements'", "pg_stat_statements.track = all",
		}})
		if err != nil {
			return stop, fmt.Errorf("starting Postgres: %w", err)
		}
		stops = append(stops, func() {
			if err := cluster.Stop(); err != nil {
				fmt.Fprintf(stderr, "parley-load: %v\n", err)
			}
		})
		if err := createDatabases(ctx, cluster.URL("postgres"), "parley", "parley_baseline"); err != nil {
			return stop, err
		}
		if err := createExtension(ctx, cluster.URL("parley"), "pg_stat_statements"); err != nil {
			return stop, err
		}
		c.db, c.baselineDB = cluster.URL("parley"), cluster.URL("parley_baseline")
		fmt.Fprintf(stderr, "parley-load: Postgres %s with fsync and synchronous_commit on, in %s, port %d\n", cluster.Version, cluster.Dir(), cluster.Port)
	}

	addr, err := freeAddr()
	if err != nil {
		return stop, err
	}
	metricsAddr, err := freeAddr()
	if err != nil {
		return stop, err
	}
	logPath := filepath.Join(dir, "parley.log")
	stopServer, err := serve(ctx, c.launch, addr, metricsAddr, c.db, logPath)
	stops = append(stops, stopServer)
	if err != nil {
		return stop, err
	}
	c.url, c.metrics = "http://"+addr, "http://"+metricsAddr
	fmt.Fprintf(stderr, "parley-load: %s serve --addr %s --metrics-addr %s (its log: %s while the run lasts)\n", c.launch, addr, metricsAddr, logPath)
	return stop, nil
}

func createDatabases(ctx context.Context, url string, names ...string) error {
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
	for _, name := range names {
		if _, err := conn.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize()); err != nil {
			return fmt.Errorf("creating the database %s: %w", name, err)
		}
	}
	return nil
}

func createExtension(ctx context.Context, url, name string) error {
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(ctx, "CREATE EXTENSION IF NOT EXISTS "+pgx.Identifier{name}.Sanitize()); err != nil {
		return fmt.Errorf("creating the extension %s: %w", name, err)
	}
	return nil
}

func freeAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return "127.0.0.1:" + strconv.Itoa(l.Addr().(*net.TCPAddr).Port), nil
}

// serve starts `binary serve` and returns once it prints that it listens. Its output goes to
// logPath. It runs in a process group of its own, so that an interrupt of the terminal
// reaches the tool, which then stops the server before the database under it.
func serve(ctx context.Context, binary, addr, metricsAddr, db, logPath string) (stop func(), err error) {
	logFile, err := os.Create(logPath)
	if err != nil {
		return func() {}, err
	}
	r, w, err := os.Pipe()
	if err != nil {
		_ = logFile.Close()
		return func() {}, err
	}
	cmd := exec.Command(binary, "serve", "--addr", addr, "--metrics-addr", metricsAddr, "--db", db)
	// Every agent connects from this machine: one address, more connections than the 64 a
	// client address may open by default (max_connections_per_address).
	cmd.Env = append(serverEnv(), "PARLEY_LIMIT_WRITES_PER_MINUTE="+strconv.Itoa(writeRateLimit),
		"PARLEY_LIMIT_MAX_CONNECTIONS_PER_ADDRESS=4096")
	cmd.Stdout, cmd.Stderr = w, w
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		_ = r.Close()
		_ = w.Close()
		_ = logFile.Close()
		return func() {}, fmt.Errorf("starting %s: %w", binary, err)
	}
	_ = w.Close()
	listening := make(chan struct{})
	copied := make(chan struct{})
	go func() {
		defer close(copied)
		sc := bufio.NewScanner(r)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		said := false
		for sc.Scan() {
			line := sc.Text()
			_, _ = logFile.WriteString(line + "\n")
			if !said && strings.Contains(line, "listening on http://") {
				said = true
				close(listening)
			}
		}
		_, _ = io.Copy(logFile, r)
	}()
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	stop = func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
		}
		<-copied
		_ = r.Close()
		_ = logFile.Close()
	}
	select {
	case <-listening:
		return stop, nil
	case err := <-exited:
		exited <- err
		<-copied
		log, _ := os.ReadFile(logPath)
		return stop, fmt.Errorf("%s serve ended before it listened (%v):\n%s", binary, err, tail(string(log), 20))
	case <-time.After(2 * time.Minute):
		return stop, errors.New(binary + " serve did not say it listens within 2 minutes")
	case <-ctx.Done():
		return stop, ctx.Err()
	}
}

// serverEnv is this process's environment without PARLEY_ settings, so that only the flags
// and the writes limit configure the server.
func serverEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "PARLEY_") {
			env = append(env, kv)
		}
	}
	return env
}
