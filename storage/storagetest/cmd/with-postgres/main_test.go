package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/parleyforum/parley/storage/storagetest"
)

func TestEnvNameIsStoragetests(t *testing.T) {
	if envPostgres != storagetest.EnvPostgres {
		t.Fatalf("with-postgres sets %s, storagetest reads %s", envPostgres, storagetest.EnvPostgres)
	}
}

// child returns a shell command that writes PARLEY_TEST_POSTGRES to a file, runs script, and
// the path of that file.
func child(t *testing.T, script string) ([]string, string) {
	out := filepath.Join(t.TempDir(), "url")
	return []string{"--", "sh", "-c", `printf %s "$PARLEY_TEST_POSTGRES" > ` + out + "; " + script}, out
}

func readURL(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("the command did not run: %v", err)
	}
	return string(b)
}

func assertStopped(t *testing.T, url string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if conn, err := pgx.Connect(ctx, url); err == nil {
		_ = conn.Close(ctx)
		t.Errorf("the cluster at %s still runs after with-postgres returned", url)
	}
}

func TestStartsAClusterForTheCommand(t *testing.T) {
	t.Setenv(envPostgres, "")
	args, urlFile := child(t, "exit 3")
	if code := run(args); code != 3 {
		t.Errorf("exit status %d, want the command's 3", code)
	}
	url := readURL(t, urlFile)
	if !strings.HasPrefix(url, "postgres://postgres@127.0.0.1:") {
		t.Fatalf("the command saw %s=%q, want the cluster's URL", envPostgres, url)
	}
	assertStopped(t, url)
}

func TestTheClusterAnswersWhileTheCommandRuns(t *testing.T) {
	t.Setenv(envPostgres, "")
	// The test binary itself is the command: it connects, and reports by exit status.
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("WITH_POSTGRES_TEST_CHILD", "1")
	if code := run([]string{exe, "-test.run=^TestConnectAsChild$", "-test.count=1"}); code != 0 {
		t.Errorf("the command could not use the cluster: exit status %d", code)
	}
}

// TestConnectAsChild is the command of TestTheClusterAnswersWhileTheCommandRuns.
func TestConnectAsChild(t *testing.T) {
	if os.Getenv("WITH_POSTGRES_TEST_CHILD") != "1" {
		t.Skip("only run by TestTheClusterAnswersWhileTheCommandRuns")
	}
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, os.Getenv(envPostgres))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var one int
	if err := conn.QueryRow(ctx, "SELECT 1").Scan(&one); err != nil || one != 1 {
		t.Fatalf("SELECT 1 = %d, %v", one, err)
	}
}

func TestUsesTheGivenServer(t *testing.T) {
	const given = "postgres://someone@db.example:5432/postgres?sslmode=disable"
	t.Setenv(envPostgres, given)
	args, urlFile := child(t, "exit 0")
	if code := run(args); code != 0 {
		t.Errorf("exit status %d, want 0", code)
	}
	if got := readURL(t, urlFile); got != given {
		t.Errorf("the command saw %s=%q, want the given %q", envPostgres, got, given)
	}
}

func TestSignalReachesTheCommandAndStopsTheCluster(t *testing.T) {
	t.Setenv(envPostgres, "")
	ready := filepath.Join(t.TempDir(), "ready")
	args, urlFile := child(t, `trap 'exit 7' TERM; touch `+ready+`; while :; do sleep 0.05; done`)
	result := make(chan int, 1)
	go func() { result <- run(args) }()
	deadline := time.Now().Add(time.Minute)
	for {
		if _, err := os.Stat(ready); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the command did not start")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := syscall.Kill(os.Getpid(), syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case code := <-result:
		if code != 7 {
			t.Errorf("exit status %d, want 7 from the command's trap", code)
		}
	case <-time.After(time.Minute):
		t.Fatal("with-postgres did not return after SIGTERM")
	}
	assertStopped(t, readURL(t, urlFile))
}

func TestExitStatusOfASignalledCommand(t *testing.T) {
	t.Setenv(envPostgres, "postgres://unused")
	if code := run([]string{"sh", "-c", "kill -KILL $$"}); code != 128+9 {
		t.Errorf("exit status %d, want %d", code, 128+9)
	}
	if code := run([]string{"/nonexistent/command"}); code != 127 {
		t.Errorf("exit status %d for a missing command, want 127", code)
	}
	if code := run([]string{"--"}); code != 2 {
		t.Errorf("exit status %d without a command, want 2 (usage)", code)
	}
}
