package main

import (
	"bufio"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// parley serve enforces § 19's bounds on connections as configured, and the manifest shows
// the values in force: with max_connections_per_address = 2, a third connection from one
// address is closed as it is accepted.
func TestServeBoundsConnections(t *testing.T) {
	config := filepath.Join(t.TempDir(), "parley.toml")
	if err := os.WriteFile(config, []byte("[limits]\nmax_connections_per_address = 2\nmin_read_bytes_per_second = 4096\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	srv := startServe(t, "--db", "sqlite:"+t.TempDir()+"/bounds.db", "--config", config)
	addr := strings.TrimPrefix(srv.base, "http://")

	answers := func(conn net.Conn) (bool, []byte) {
		conn.SetDeadline(time.Now().Add(20 * time.Second))
		if _, err := io.WriteString(conn, "GET /v1/manifest HTTP/1.1\r\nHost: x\r\n\r\n"); err != nil {
			return false, nil
		}
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err != nil {
			if ne, ok := err.(net.Error); ok && ne.Timeout() {
				t.Fatal("the server neither answered nor closed the connection")
			}
			return false, nil
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode == http.StatusOK, body
	}
	var manifest []byte
	for i := range 2 {
		conn, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		ok, body := answers(conn)
		if !ok {
			t.Fatalf("connection %d was refused", i+1)
		}
		manifest = body
	}
	third, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer third.Close()
	if ok, _ := answers(third); ok {
		t.Error("a third connection from one address was answered; max_connections_per_address is 2")
	}

	var m struct{ Limits map[string]int }
	if err := json.Unmarshal(manifest, &m); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]int{"max_connections": 4096, "max_connections_per_address": 2, "min_read_bytes_per_second": 4096} {
		if m.Limits[name] != want {
			t.Errorf("the manifest's limits.%s is %d, want %d", name, m.Limits[name], want)
		}
	}
	srv.stop(syscall.SIGTERM)
}
