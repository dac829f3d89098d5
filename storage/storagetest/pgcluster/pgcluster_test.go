package pgcluster

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/jackc/pgx/v5"
)

func TestNewestFirst(t *testing.T) {
	got := newestFirst([]string{"9.6", "15", "extra", "17", "10", "9.5", "15.2"})
	want := []string{"17", "15.2", "15", "10", "9.6", "9.5", "extra"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("newestFirst (-want +got):\n%s", diff)
	}
}

func TestTraversableByOthers(t *testing.T) {
	open := t.TempDir()
	if err := os.Chmod(open, 0o755); err != nil {
		t.Fatal(err)
	}
	closed := filepath.Join(open, "closed")
	if err := os.Mkdir(closed, 0o700); err != nil {
		t.Fatal(err)
	}
	inner := filepath.Join(closed, "inner")
	if err := os.Mkdir(inner, 0o755); err != nil {
		t.Fatal(err)
	}
	if !traversableByOthers("/") {
		t.Error("/ is not traversable")
	}
	if traversableByOthers(inner) {
		t.Errorf("%s is traversable, but its parent has mode 0700", inner)
	}
	if traversableByOthers(filepath.Join(open, "missing")) {
		t.Error("a missing folder is traversable")
	}
}

func TestStartStop(t *testing.T) {
	ctx := context.Background()
	begin := time.Now()
	c, err := Start(ctx)
	if errors.Is(err, ErrNotInstalled) {
		t.Fatalf("no Postgres found: install postgresql (%v)", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("Postgres %s started in %v in %s", c.Version, time.Since(begin).Round(time.Millisecond), c.Dir())
	stopped := false
	t.Cleanup(func() {
		if !stopped {
			_ = c.Stop()
		}
	})

	conn, err := pgx.Connect(ctx, c.URL("postgres"))
	if err != nil {
		t.Fatalf("connect over TCP: %v", err)
	}
	for setting, want := range map[string]string{
		"max_connections":  strconv.Itoa(MaxConnections),
		"fsync":            "off",
		"listen_addresses": "127.0.0.1",
		"server_encoding":  "UTF8",
		"port":             strconv.Itoa(c.Port),
	} {
		var got string
		if err := conn.QueryRow(ctx, "SELECT current_setting($1)", setting).Scan(&got); err != nil {
			t.Fatalf("SHOW %s: %v", setting, err)
		}
		if got != want {
			t.Errorf("%s = %q, want %q", setting, got, want)
		}
	}
	if err := conn.Close(ctx); err != nil {
		t.Fatal(err)
	}

	socketURL := "postgres://" + Superuser + "@/postgres?host=" + c.Dir() + "&port=" + strconv.Itoa(c.Port)
	sconn, err := pgx.Connect(ctx, socketURL)
	if err != nil {
		t.Fatalf("connect over the unix socket in the cluster's folder: %v", err)
	}
	_ = sconn.Close(ctx)

	if os.Geteuid() == 0 {
		info, err := os.Stat(filepath.Join(c.Dir(), "data"))
		if err != nil {
			t.Fatal(err)
		}
		if uid := info.Sys().(*syscall.Stat_t).Uid; uid == 0 {
			t.Error("running as root, the data folder belongs to root: the server would refuse it")
		}
	}

	stopped = true
	if err := c.Stop(); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	if err := c.Stop(); err != nil {
		t.Errorf("second Stop: %v", err)
	}
	if _, err := os.Stat(c.Dir()); !os.IsNotExist(err) {
		t.Errorf("after Stop, %s still exists (%v)", c.Dir(), err)
	}
	shortCtx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	if conn, err := pgx.Connect(shortCtx, c.URL("postgres")); err == nil {
		_ = conn.Close(ctx)
		t.Error("after Stop, the server still accepts connections")
	}
}

// A durable cluster keeps Postgres's durability on, the test cluster turns it off; OnDisk
// keeps the cluster off tmpfs.
func TestDurable(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		opts Options
		want string
	}{
		{Options{Durable: true}, "on"},
		{Options{Durable: true, OnDisk: true}, "on"},
		{Options{}, "off"},
	} {
		cluster, err := StartWith(ctx, c.opts)
		if err != nil {
			t.Fatal(err)
		}
		conn, err := pgx.Connect(ctx, cluster.URL("postgres"))
		if err != nil {
			_ = cluster.Stop()
			t.Fatal(err)
		}
		var fs syscall.Statfs_t
		if err := syscall.Statfs(cluster.Dir(), &fs); err != nil {
			t.Error(err)
		} else if c.opts.OnDisk && fs.Type == tmpfsMagic {
			t.Errorf("a cluster on disk in %s, on tmpfs", cluster.Dir())
		}
		for _, setting := range []string{"fsync", "synchronous_commit", "full_page_writes"} {
			var got string
			if err := conn.QueryRow(ctx, "SELECT current_setting($1)", setting).Scan(&got); err != nil {
				t.Errorf("SHOW %s: %v", setting, err)
			} else if got != c.want {
				t.Errorf("%+v: %s = %q, want %q", c.opts, setting, got, c.want)
			}
		}
		_ = conn.Close(ctx)
		if err := cluster.Stop(); err != nil {
			t.Fatal(err)
		}
	}
}

// tmpfsMagic is Linux's statfs type of tmpfs.
const tmpfsMagic = 0x01021994
