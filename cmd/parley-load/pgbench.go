package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/parleyforum/parley/storage/storagetest/pgcluster"
)

// pgbench runs the baseline's script (pgbench_script.go) with the pgbench of the Postgres
// installed on this machine, against a database of its own.
type pgbench struct {
	program string // the pgbench executable
	db      string // the database URL, migrated
	dir     string // the script and the latency logs
	script  string
}

// findPgbench finds pgbench: beside the server binaries the test clusters use (initdb's
// folder: on PATH, or the newest /usr/lib/postgresql/N/bin), else on PATH (Debian's wrapper),
// else in pg_config --bindir. It comes with the server's package wherever the tests can
// start a cluster.
func findPgbench() (string, error) {
	var candidates []string
	if dir, err := pgcluster.FindBinaries(); err == nil {
		candidates = append(candidates, filepath.Join(dir, "pgbench"))
	}
	if p, err := exec.LookPath("pgbench"); err == nil {
		candidates = append(candidates, p)
	}
	if out, err := exec.Command("pg_config", "--bindir").Output(); err == nil {
		candidates = append(candidates, filepath.Join(strings.TrimSpace(string(out)), "pgbench"))
	}
	for _, p := range candidates {
		if info, err := os.Stat(p); err == nil && !info.IsDir() && info.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", errors.New("pgbench not found beside initdb, on PATH or in pg_config --bindir: install the Postgres server package (postgresql-15 on Debian), which has it")
}

// newPgbench writes the script into a folder of its own.
func newPgbench(db, script string) (*pgbench, func(), error) {
	program, err := findPgbench()
	if err != nil {
		return nil, func() {}, err
	}
	dir, err := os.MkdirTemp("", "parley-load-pgbench-")
	if err != nil {
		return nil, func() {}, err
	}
	cleanup := func() { _ = os.RemoveAll(dir) }
	p := &pgbench{program: program, db: db, dir: dir, script: filepath.Join(dir, "send.sql")}
	if err := os.WriteFile(p.script, []byte(script), 0o644); err != nil {
		return nil, cleanup, err
	}
	return p, cleanup, nil
}

// pgbenchRun is what one run of pgbench did: how many sends, in what time, each send's
// latency.
type pgbenchRun struct {
	sends   int
	elapsed time.Duration
	lat     []time.Duration
}

// run runs clients for seconds (when above 0) or sends per client, and reads the latency of
// every send from pgbench's per-transaction log.
func (p *pgbench) run(ctx context.Context, clients int, seconds int, perClient int) (*pgbenchRun, error) {
	logs, err := os.MkdirTemp(p.dir, "log-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(logs)
	args := []string{"-M", "prepared", "-n", "-c", strconv.Itoa(clients), "-j", strconv.Itoa(min(2, clients)),
		"-f", p.script, "-D", "step=0", "-D", "tid=0", "-D", "root=0", "-D", "setby=0",
		"-l", "--log-prefix", filepath.Join(logs, "tx")}
	if seconds > 0 {
		args = append(args, "-T", strconv.Itoa(seconds))
	} else {
		args = append(args, "-t", strconv.Itoa(perClient))
	}
	args = append(args, p.db)
	cmd := exec.CommandContext(ctx, p.program, args...)
	cmd.Env = pgbenchEnv()
	cmd.Dir = p.dir
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("pgbench: %v\n%s", err, tail(out.String(), 20))
	}
	res := &pgbenchRun{}
	if res.lat, err = readPgbenchLogs(logs); err != nil {
		return nil, err
	}
	res.sends = len(res.lat)
	tps, err := pgbenchTPS(out.String())
	if err != nil {
		return nil, err
	}
	if tps > 0 {
		res.elapsed = time.Duration(float64(res.sends) / tps * float64(time.Second))
	}
	return res, nil
}

// pgbenchEnv is this process's environment without PG* variables, so that nothing but the
// URL says where pgbench connects.
func pgbenchEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "PG") {
			env = append(env, kv)
		}
	}
	return env
}

var tpsLine = regexp.MustCompile(`tps = ([0-9.]+) \(without initial connection time\)`)

// pgbenchTPS reads the throughput pgbench reports, connections excluded.
func pgbenchTPS(out string) (float64, error) {
	m := tpsLine.FindStringSubmatch(out)
	if m == nil {
		return 0, fmt.Errorf("pgbench reported no tps:\n%s", tail(out, 20))
	}
	return strconv.ParseFloat(m[1], 64)
}

// readPgbenchLogs reads every per-transaction log line, "client_id transaction_no time
// script_no time_epoch time_us", time being the transaction's latency in microseconds.
func readPgbenchLogs(dir string) ([]time.Duration, error) {
	files, err := filepath.Glob(filepath.Join(dir, "tx*"))
	if err != nil {
		return nil, err
	}
	var lat []time.Duration
	for _, name := range files {
		f, err := os.Open(name)
		if err != nil {
			return nil, err
		}
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			fields := strings.Fields(sc.Text())
			if len(fields) < 3 {
				continue
			}
			us, err := strconv.ParseInt(fields[2], 10, 64)
			if err != nil {
				_ = f.Close()
				return nil, fmt.Errorf("%s: not a pgbench log line: %q", name, sc.Text())
			}
			lat = append(lat, time.Duration(us)*time.Microsecond)
		}
		_ = f.Close()
		if err := sc.Err(); err != nil {
			return nil, err
		}
	}
	return lat, nil
}

func tail(s string, lines int) string {
	all := strings.Split(strings.TrimSpace(s), "\n")
	if len(all) > lines {
		all = all[len(all)-lines:]
	}
	return strings.Join(all, "\n")
}
