// Package pgcluster starts a throwaway Postgres server for tests: a fresh cluster in a
// temporary folder, listening on 127.0.0.1 on a free port and on a unix socket inside that
// folder, tuned for speed instead of durability (unless Options.Durable asks otherwise, as
// measurements do), and deleted again by Stop.
package pgcluster

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
)

// Superuser is the role initdb creates; it needs no password (trust authentication).
const Superuser = "postgres"

// MaxConnections leaves room for concurrency tests, each of which may open dozens of
// connections, in several test processes that share one cluster.
const MaxConnections = 200

// Cluster is a running throwaway Postgres server.
type Cluster struct {
	// Port is the TCP port on 127.0.0.1.
	Port int
	// Version is the server's major version, e.g. "15".
	Version string

	dir     string // owns data/, the socket and postgres.log
	bin     string
	account *account
	opts    Options

	stopOnce sync.Once
	stopErr  error
}

// Options choose how a cluster is set up; the zero value is the test cluster.
type Options struct {
	// Durable keeps Postgres's defaults of fsync, synchronous_commit and full_page_writes
	// (all on), so that a commit waits for its WAL to reach the disk, as in production. The
	// load measurements need it: without it a commit costs a fraction of its real price, and
	// what a send costs besides the commit would look larger than it is. Tests leave it off.
	Durable bool
	// OnDisk makes the cluster in the temporary folder even when /dev/shm has room. A
	// durable cluster in /dev/shm flushes its WAL to memory: every write is paid in CPU as
	// on a disk, but a flush costs no wait for a device. On a disk, a commit also waits for
	// the device, which on a shared machine is slow and noisy.
	OnDisk bool
	// Settings are more lines of postgresql.conf, after the others (so they win), e.g.
	// "shared_preload_libraries = 'pg_stat_statements'" for a load run that counts statements.
	Settings []string
}

// Start creates and starts a test cluster and returns once it accepts connections. The
// caller must call Stop, also when the tests fail, or the server keeps running.
func Start(ctx context.Context) (*Cluster, error) { return StartWith(ctx, Options{}) }

// StartWith is Start with options.
func StartWith(ctx context.Context, opts Options) (*Cluster, error) {
	bin, err := FindBinaries()
	if err != nil {
		return nil, err
	}
	acct, err := serverAccount()
	if err != nil {
		return nil, err
	}
	parent := tempParent(acct)
	if opts.OnDisk {
		parent = diskParent(acct)
	}
	dir, err := os.MkdirTemp(parent, "parley-pg-")
	if err != nil {
		return nil, fmt.Errorf("cannot make a folder for Postgres: %v", err)
	}
	c := &Cluster{dir: dir, bin: bin, account: acct, opts: opts}
	if err := c.start(ctx); err != nil {
		_ = c.Stop()
		return nil, err
	}
	return c, nil
}

func (c *Cluster) start(ctx context.Context) error {
	if err := c.account.own(c.dir); err != nil {
		return err
	}
	out, err := c.run("initdb", "--pgdata", c.dataDir(), "--username", Superuser, "--auth=trust",
		"--no-sync", "--encoding=UTF8", "--locale=C")
	if err != nil {
		return fmt.Errorf("initdb failed: %v\n%s", err, out)
	}
	if c.Version, err = majorVersion(c.dataDir()); err != nil {
		return err
	}
	if err := c.configure(); err != nil {
		return err
	}
	// The free port can be taken by someone else before the server binds it: try a few.
	for attempt := 1; ; attempt++ {
		if c.Port, err = freePort(); err != nil {
			return err
		}
		// --log points the server's output at a file: else the server would inherit, and hold
		// open for good, the pipe that run reads pg_ctl's output from.
		out, err := c.run("pg_ctl", "start", "--pgdata", c.dataDir(), "--log", c.logFile(),
			"--wait", "--timeout=60", "-o", "-p "+strconv.Itoa(c.Port))
		if err == nil {
			break
		}
		logTail := c.logTail()
		if attempt < 5 && strings.Contains(logTail, "could not bind") {
			continue
		}
		return fmt.Errorf("pg_ctl start failed: %v\n%s\n%s", err, out, logTail)
	}
	return c.waitReady(ctx)
}

// configure appends the settings of a test server to postgresql.conf (later lines win).
func (c *Cluster) configure() error {
	settings := []string{
		"",
		"# Added for a throwaway test cluster.",
		"listen_addresses = '127.0.0.1'",
		"unix_socket_directories = " + confQuote(c.dir),
		"max_connections = " + strconv.Itoa(MaxConnections),
	}
	if c.opts.Durable {
		settings = append(settings, "fsync = on", "synchronous_commit = on", "full_page_writes = on")
	} else {
		// The cluster is deleted after the tests: durability buys nothing and costs time.
		settings = append(settings, "fsync = off", "synchronous_commit = off", "full_page_writes = off")
	}
	settings = append(settings, c.opts.Settings...)
	path := filepath.Join(c.dataDir(), "postgresql.conf")
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
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
	return nil
}

// waitReady connects until the server answers: pg_ctl --wait already waited for the server
// to report itself ready, this proves it over TCP, as the tests will connect.
func (c *Cluster) waitReady(ctx context.Context) error {
	if err := pingUntilReady(ctx, c.URL("postgres"), nil); err != nil {
		return fmt.Errorf("Postgres started but does not accept connections on port %d: %v\n%s", c.Port, err, c.logTail())
	}
	return nil
}

// pingUntilReady connects to url until a connection answers, for at most 30 s, or until gone
// is closed (the server ended; nil for never). It returns the last error when it gives up.
func pingUntilReady(ctx context.Context, url string, gone <-chan struct{}) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	for {
		conn, err := pgx.Connect(ctx, url)
		if err == nil {
			err = conn.Ping(ctx)
			_ = conn.Close(context.Background())
			if err == nil {
				return nil
			}
		}
		select {
		case <-gone:
			return fmt.Errorf("the server ended: %v", err)
		case <-ctx.Done():
			return err
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// URL is the address of one database of the cluster, as storage.Open accepts it.
func (c *Cluster) URL(database string) string {
	u := url.URL{
		Scheme:   "postgres",
		User:     url.User(Superuser),
		Host:     net.JoinHostPort("127.0.0.1", strconv.Itoa(c.Port)),
		Path:     "/" + database,
		RawQuery: "sslmode=disable",
	}
	return u.String()
}

// Dir is the cluster's folder: data/, the unix socket and postgres.log.
func (c *Cluster) Dir() string { return c.dir }

// Stop shuts the server down (fast: open sessions are ended) and deletes its folder. It may be
// called more than once.
func (c *Cluster) Stop() error {
	c.stopOnce.Do(func() { c.stopErr = c.stop() })
	return c.stopErr
}

func (c *Cluster) stop() error {
	var stopErr error
	if _, err := os.Stat(filepath.Join(c.dataDir(), "postmaster.pid")); err == nil {
		if out, err := c.run("pg_ctl", "stop", "--pgdata", c.dataDir(), "--mode=fast", "--wait", "--timeout=60"); err != nil {
			stopErr = fmt.Errorf("pg_ctl stop failed: %v\n%s", err, out)
			// Deleting the folder under a live server would leave it running for good.
			if out, err := c.run("pg_ctl", "stop", "--pgdata", c.dataDir(), "--mode=immediate", "--wait"); err != nil {
				return fmt.Errorf("%v\nimmediate stop failed too, the server in %s is left running: %v\n%s", stopErr, c.dir, err, out)
			}
		}
	}
	if err := os.RemoveAll(c.dir); err != nil && stopErr == nil {
		stopErr = fmt.Errorf("cannot remove %s: %v", c.dir, err)
	}
	return stopErr
}

func (c *Cluster) dataDir() string { return filepath.Join(c.dir, "data") }
func (c *Cluster) logFile() string { return filepath.Join(c.dir, "postgres.log") }

// run runs one of the server's programs as the cluster's account, in the cluster's folder
// (the account may not be allowed into the caller's working folder), with a clean
// environment: PG* variables of the caller must not redirect the tools elsewhere.
func (c *Cluster) run(program string, args ...string) ([]byte, error) {
	cmd := exec.Command(filepath.Join(c.bin, program), args...)
	cmd.Dir = c.dir
	cmd.Env = cleanEnv()
	c.account.runAs(cmd)
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = &out
	err := cmd.Run()
	return bytes.TrimSpace(out.Bytes()), err
}

func cleanEnv() []string {
	env := []string{"LC_ALL=C"}
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "PG") || strings.HasPrefix(kv, "LC_") || strings.HasPrefix(kv, "LANG") {
			continue
		}
		env = append(env, kv)
	}
	return env
}

// logTail returns the end of the server's log, the place that says why it did not start.
func (c *Cluster) logTail() string {
	b, err := os.ReadFile(c.logFile())
	if err != nil {
		return ""
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) > 20 {
		lines = lines[len(lines)-20:]
	}
	return strings.Join(lines, "\n")
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("cannot find a free port: %v", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// confQuote quotes a string value for postgresql.conf.
func confQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", "''") + "'"
}
