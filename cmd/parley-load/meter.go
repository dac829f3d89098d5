package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
)

// meter reads, before and after every round, what the processes of the run have spent: the
// server's CPU (process_cpu_seconds_total of its /metrics), Postgres's CPU (the postmaster and
// every process it started, from /proc), the CPU of this tool and of the programs it ran and
// waited for (pgbench), and the statements Postgres ran (pg_stat_statements, when the cluster
// loads it). The modes take turns, so what was spent during a round is that mode's. Every
// reading that cannot be taken (a server elsewhere, no pg_stat_statements) is left out.
type meter struct {
	metricsURL string
	client     *http.Client
	conn       *pgx.Conn // to a Postgres database of the run: pg_backend_pid, pg_stat_statements
	postmaster int       // the postmaster's process id, 0 when unknown
	statements bool      // pg_stat_statements answers
}

// reading is what had been spent at one moment; ok fields say which were read.
type reading struct {
	server, database, tool time.Duration
	serverOK, databaseOK   bool
	top, nested            map[string]int64 // statements by database name
	each                   map[stmtKey]stmtStat
	statementsOK           bool
}

// stmtKey is one statement of pg_stat_statements.
type stmtKey struct {
	db       string
	queryID  int64
	toplevel bool
}

type stmtStat struct {
	calls int64
	ms    float64 // total execution time, waits for locks included
	query string
}

// usage is what one mode spent over its rounds.
type usage struct {
	Server, Database, Tool time.Duration
	ServerOK, DatabaseOK   bool
	Top, Nested            int64
	Each                   map[stmtKey]stmtStat
	StatementsOK           bool
}

func newMeter(ctx context.Context, c *config) *meter {
	m := &meter{client: &http.Client{Timeout: 5 * time.Second}}
	if c.metrics != "" {
		m.metricsURL = strings.TrimRight(c.metrics, "/") + "/metrics"
	}
	var pgURL string
	for _, u := range []string{c.db, c.baselineDB} {
		if isPostgres(u) {
			pgURL = u
			break
		}
	}
	if pgURL == "" {
		return m
	}
	cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	conn, err := pgx.Connect(cctx, pgURL)
	if err != nil {
		return m
	}
	m.conn = conn
	var pid int
	if err := conn.QueryRow(cctx, "SELECT pg_backend_pid()").Scan(&pid); err == nil {
		if st, err := procStat(pid); err == nil {
			m.postmaster = st.ppid
		}
	}
	var n int64
	m.statements = conn.QueryRow(cctx, "SELECT count(*) FROM pg_stat_statements").Scan(&n) == nil
	return m
}

func (m *meter) close() {
	if m.conn != nil {
		_ = m.conn.Close(context.Background())
	}
}

func (m *meter) read(ctx context.Context) reading {
	var r reading
	if m.metricsURL != "" {
		if v, err := m.metric(ctx, "process_cpu_seconds_total"); err == nil {
			r.server, r.serverOK = time.Duration(v*float64(time.Second)), true
		}
	}
	if m.postmaster != 0 {
		if d, err := processTreeCPU(m.postmaster); err == nil {
			r.database, r.databaseOK = d, true
		}
	}
	var self, children syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &self) == nil && syscall.Getrusage(syscall.RUSAGE_CHILDREN, &children) == nil {
		r.tool = rusageCPU(self) + rusageCPU(children)
	}
	if m.statements {
		r.top, r.nested, r.each = map[string]int64{}, map[string]int64{}, map[stmtKey]stmtStat{}
		rows, err := m.conn.Query(ctx, `SELECT d.datname, s.toplevel, s.queryid, s.calls, s.total_exec_time,
				left(regexp_replace(s.query, '\s+', ' ', 'g'), 160)
			FROM pg_stat_statements s JOIN pg_database d ON d.oid = s.dbid
			WHERE s.query NOT LIKE '%pg_stat_statements%' AND s.query NOT LIKE '%pg_backend_pid%'`)
		if err == nil {
			for rows.Next() {
				var k stmtKey
				var st stmtStat
				if rows.Scan(&k.db, &k.toplevel, &k.queryID, &st.calls, &st.ms, &st.query) == nil {
					if k.toplevel {
						r.top[k.db] += st.calls
					} else {
						r.nested[k.db] += st.calls
					}
					r.each[k] = st
				}
			}
			rows.Close()
			r.statementsOK = rows.Err() == nil
		}
	}
	return r
}

// add adds to u what was spent between a and b in the database named db.
func (u *usage) add(a, b reading, db string) {
	if a.serverOK && b.serverOK {
		u.Server += b.server - a.server
		u.ServerOK = true
	}
	if a.databaseOK && b.databaseOK {
		u.Database += b.database - a.database
		u.DatabaseOK = true
	}
	u.Tool += b.tool - a.tool
	if a.statementsOK && b.statementsOK && db != "" {
		u.Top += b.top[db] - a.top[db]
		u.Nested += b.nested[db] - a.nested[db]
		u.StatementsOK = true
		if u.Each == nil {
			u.Each = map[stmtKey]stmtStat{}
		}
		for k, after := range b.each {
			if k.db != db {
				continue
			}
			before := a.each[k]
			if after.calls > before.calls {
				sum := u.Each[k]
				sum.calls += after.calls - before.calls
				sum.ms += after.ms - before.ms
				sum.query = after.query
				u.Each[k] = sum
			}
		}
	}
}

func (m *meter) metric(ctx context.Context, name string) (float64, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, m.metricsURL, nil)
	if err != nil {
		return 0, err
	}
	resp, err := m.client.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		_, _ = io.Copy(io.Discard, resp.Body)
		return 0, fmt.Errorf("%s: %s", m.metricsURL, resp.Status)
	}
	return metricValue(resp.Body, name)
}

func rusageCPU(r syscall.Rusage) time.Duration {
	return time.Duration(r.Utime.Nano() + r.Stime.Nano())
}

// clockTick is the unit of /proc's CPU times (USER_HZ, 100 on Linux).
const clockTick = 10 * time.Millisecond

type stat struct {
	ppid           int
	utime, stime   int64 // of the process
	cutime, cstime int64 // of its children it waited for
}

// procStat reads /proc/PID/stat.
func procStat(pid int) (stat, error) {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return stat{}, err
	}
	// The command name, in parentheses, may hold spaces: the fields follow the last ")".
	i := strings.LastIndexByte(string(b), ')')
	if i < 0 {
		return stat{}, fmt.Errorf("/proc/%d/stat: unexpected %q", pid, b)
	}
	f := strings.Fields(string(b[i+1:]))
	// f[0] is field 3 (state): ppid is field 4, utime 14, stime 15, cutime 16, cstime 17.
	if len(f) < 15 {
		return stat{}, fmt.Errorf("/proc/%d/stat: too few fields", pid)
	}
	var s stat
	var nums [5]int64
	for k, idx := range []int{1, 11, 12, 13, 14} {
		if nums[k], err = strconv.ParseInt(f[idx], 10, 64); err != nil {
			return stat{}, fmt.Errorf("/proc/%d/stat: %v", pid, err)
		}
	}
	s.ppid = int(nums[0])
	s.utime, s.stime, s.cutime, s.cstime = nums[1], nums[2], nums[3], nums[4]
	return s, nil
}

// processTreeCPU is the CPU time of a process, of its children alive now and of the children
// it has waited for: for the postmaster, what Postgres spent (backends that ended are in the
// postmaster's children's times).
func processTreeCPU(pid int) (time.Duration, error) {
	root, err := procStat(pid)
	if err != nil {
		return 0, err
	}
	ticks := root.utime + root.stime + root.cutime + root.cstime
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return 0, err
	}
	for _, e := range entries {
		child, err := strconv.Atoi(e.Name())
		if err != nil || child == pid {
			continue
		}
		st, err := procStat(child)
		if err != nil || st.ppid != pid {
			continue
		}
		ticks += st.utime + st.stime + st.cutime + st.cstime
	}
	return time.Duration(ticks) * clockTick, nil
}

// databaseName is the database a URL names ("" when it is no Postgres URL).
func databaseName(url string) string {
	if !isPostgres(url) {
		return ""
	}
	cfg, err := pgx.ParseConfig(url)
	if err != nil {
		return ""
	}
	return cfg.Database
}
