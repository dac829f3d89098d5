package pgcluster

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// ErrNoPgBouncer means that the pgbouncer program was not found. make test installs it
// (Debian's package pgbouncer); the tests that need it fail with this, they never skip.
var ErrNoPgBouncer = errors.New("no pgbouncer on PATH or in /usr/sbin: install it (apt-get install pgbouncer), as make test does")

// PgBouncer is a running pgbouncer in transaction pooling mode in front of one database:
// every transaction of a client may run on another server connection, as in production
// deployments with many instances.
type PgBouncer struct {
	// Port is its TCP port on 127.0.0.1.
	Port int
	// PoolSize is how many server connections it keeps at most: fewer than a client pool
	// opens, so that clients' transactions take turns on them.
	PoolSize int

	dir      string
	cmd      *exec.Cmd
	exited   chan struct{} // closed when the process has ended
	stopOnce sync.Once
	stopErr  error
}

// StartPgBouncer starts pgbouncer in transaction pooling mode in front of the database that
// target (postgres://user[:password]@host:port/database) names, and returns once it accepts
// connections. Clients reach it with the same user and database name (see URL), without a
// password. The caller must call Stop.
func StartPgBouncer(ctx context.Context, target string) (*PgBouncer, error) {
	bin, err := findPgBouncer()
	if err != nil {
		return nil, err
	}
	u, err := url.Parse(target)
	if err != nil {
		return nil, fmt.Errorf("the database behind pgbouncer: %v", err)
	}
	acct, err := serverAccount()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp(tempParent(acct), "parley-pgbouncer-")
	if err != nil {
		return nil, fmt.Errorf("cannot make a folder for pgbouncer: %v", err)
	}
	if err := acct.own(dir); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	b := &PgBouncer{dir: dir, PoolSize: 2, exited: make(chan struct{})}
	if b.Port, err = freePort(); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	if err := b.configure(u); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	b.cmd = exec.Command(bin, filepath.Join(dir, "pgbouncer.ini"))
	b.cmd.Dir = dir
	b.cmd.Env = cleanEnv()
	acct.runAs(b.cmd)
	if err := b.cmd.Start(); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("cannot start pgbouncer: %v", err)
	}
	go func() {
		_ = b.cmd.Wait()
		close(b.exited)
	}()
	if err := pingUntilReady(ctx, b.URL(target, ""), b.exited); err != nil {
		_ = b.Stop()
		return nil, fmt.Errorf("pgbouncer does not accept connections on port %d: %v\n%s", b.Port, err, b.LogTail())
	}
	return b, nil
}

// configure writes pgbouncer.ini and the list of users it lets in (all without a password:
// the listener is on loopback and lives as long as a test).
func (b *PgBouncer) configure(target *url.URL) error {
	database := strings.TrimPrefix(target.Path, "/")
	user := target.User.Username()
	server := fmt.Sprintf("host=%s port=%s dbname=%s user=%s", target.Hostname(), target.Port(), database, user)
	if password, ok := target.User.Password(); ok {
		server += " password=" + password
	}
	ini := strings.Join([]string{
		"[databases]",
		database + " = " + server,
		"[pgbouncer]",
		"listen_addr = 127.0.0.1",
		"listen_port = " + strconv.Itoa(b.Port),
		"unix_socket_dir =",
		"auth_type = trust",
		"auth_file = " + filepath.Join(b.dir, "users.txt"),
		"pool_mode = transaction",
		"default_pool_size = " + strconv.Itoa(b.PoolSize),
		"max_client_conn = 200",
		"logfile = " + b.logFile(),
		"pidfile = " + filepath.Join(b.dir, "pgbouncer.pid"),
		"",
	}, "\n")
	if err := os.WriteFile(filepath.Join(b.dir, "pgbouncer.ini"), []byte(ini), 0o644); err != nil {
		return fmt.Errorf("cannot configure pgbouncer: %v", err)
	}
	users := fmt.Sprintf("%q \"\"\n", user)
	if err := os.WriteFile(filepath.Join(b.dir, "users.txt"), []byte(users), 0o644); err != nil {
		return fmt.Errorf("cannot configure pgbouncer: %v", err)
	}
	return nil
}

// URL is the address of the database through pgbouncer, for storage.Open, with query added
// to its parameters (such as default_query_exec_mode=cache_describe).
func (b *PgBouncer) URL(target, query string) string {
	u, _ := url.Parse(target)
	u.User = url.User(u.User.Username())
	u.Host = net.JoinHostPort("127.0.0.1", strconv.Itoa(b.Port))
	u.RawQuery = "sslmode=disable"
	if query != "" {
		u.RawQuery += "&" + query
	}
	return u.String()
}

// Stop ends pgbouncer (SIGTERM closes its connections at once) and removes its folder. It
// may be called more than once.
func (b *PgBouncer) Stop() error {
	b.stopOnce.Do(func() {
		select {
		case <-b.exited:
		default:
			_ = b.cmd.Process.Signal(syscall.SIGTERM) // immediate shutdown; SIGINT would wait for clients
			select {
			case <-b.exited:
			case <-time.After(10 * time.Second):
				_ = b.cmd.Process.Kill()
				<-b.exited
			}
		}
		b.stopErr = os.RemoveAll(b.dir)
	})
	return b.stopErr
}

func (b *PgBouncer) logFile() string { return filepath.Join(b.dir, "pgbouncer.log") }

// LogTail is the end of pgbouncer's log, where it says why it refused a client.
func (b *PgBouncer) LogTail() string {
	raw, err := os.ReadFile(b.logFile())
	if err != nil {
		return ""
	}
	lines := strings.Split(strings.TrimSpace(string(raw)), "\n")
	return strings.Join(lines[max(0, len(lines)-20):], "\n")
}

// findPgBouncer looks on PATH, then where Debian installs it (/usr/sbin is not on every
// user's PATH).
func findPgBouncer() (string, error) {
	if p, err := exec.LookPath("pgbouncer"); err == nil {
		return p, nil
	}
	if p := "/usr/sbin/pgbouncer"; isExecutable(p) {
		return p, nil
	}
	return "", ErrNoPgBouncer
}
