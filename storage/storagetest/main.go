package storagetest

import (
	"fmt"
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/parleyforum/parley/storage/storagetest/pgcluster"
)

var mainRunning atomic.Bool

// Main runs the tests of a package and then stops what storagetest started for them: the
// template databases and, unless PARLEY_TEST_POSTGRES named a server, the Postgres cluster.
// Call it from TestMain:
//
//	func TestMain(m *testing.M) { storagetest.Main(m) }
func Main(m *testing.M) {
	mainRunning.Store(true)
	code := m.Run()
	if err := removeSQLiteTemplate(); err != nil {
		fmt.Fprintf(os.Stderr, "storagetest: removing the SQLite template: %v\n", err)
	}
	if pgServer != nil {
		if err := pgServer.close(); err != nil {
			fmt.Fprintf(os.Stderr, "storagetest: cleaning up Postgres: %v\n", err)
			if code == 0 {
				code = 1
			}
		}
	}
	os.Exit(code)
}

// requireMain fails a test of a package without Main, whose tests would otherwise leave a
// Postgres server running after they end.
func requireMain(t testing.TB) {
	t.Helper()
	if !mainRunning.Load() {
		t.Fatal("storagetest: this package needs a main_test.go with " +
			"func TestMain(m *testing.M) { storagetest.Main(m) }, so that the test database server is stopped after the tests")
	}
}

// stopOnSignal stops the cluster when the test process is interrupted: pg_ctl detaches the
// server from the terminal, so a ^C reaches the tests but not the server, and Main's cleanup
// does not run when the process dies of a signal.
func stopOnSignal(c *pgcluster.Cluster) {
	signals := make(chan os.Signal, 1)
	signal.Notify(signals, os.Interrupt, syscall.SIGTERM)
	go func() {
		sig := <-signals
		fmt.Fprintf(os.Stderr, "storagetest: %v: stopping the test Postgres\n", sig)
		if err := c.Stop(); err != nil {
			fmt.Fprintf(os.Stderr, "storagetest: %v\n", err)
		}
		code := 1
		if s, ok := sig.(syscall.Signal); ok {
			code = 128 + int(s)
		}
		os.Exit(code)
	}()
}
