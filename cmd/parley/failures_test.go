package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parleyforum/parley/storage"
	"github.com/parleyforum/parley/storage/storagetest"
)

// Unreachable databases (nothing listens on port 1, and /proc admits no new folders) and what
// the error says about each.
var unreachable = map[storage.Kind]struct{ url, says string }{
	storage.Postgres: {"postgres://parley:secret@127.0.0.1:1/parley?sslmode=disable", "cannot reach the database"},
	storage.SQLite:   {"sqlite:/proc/parley-test/parley.db", "/proc/parley-test/parley.db"},
}

func TestUsageErrors(t *testing.T) {
	url := storagetest.NewURL(t, storage.SQLite)
	badConfig := filepath.Join(t.TempDir(), "parley.toml")
	if err := os.WriteFile(badConfig, []byte("adress = \"127.0.0.1:1\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		in   invocation
		want string
	}{
		{"no command", invocation{}, "no command"},
		{"unknown command", invocation{args: []string{"frobnicate"}}, `unknown command "frobnicate"`},
		{"unknown subcommand", invocation{args: []string{"token", "mint"}}, `unknown command "token mint"`},
		{"missing subcommand", invocation{args: []string{"token", "--db", url}}, "token needs a subcommand"},
		{"other flag before the command", invocation{args: []string{"--json", "token", "list", "--db", url}}, "--json"},
		{"value missing before the command", invocation{args: []string{"--db"}}, "--db"},
		{"bad flag", invocation{args: []string{"token", "list", "--colour", "--db", url}}, "flag provided but not defined: --colour"},
		{"missing value", invocation{args: []string{"token", "create", "--db", url, "--handle"}}, "flag needs an argument: --handle"},
		{"no handle", invocation{args: []string{"token", "create", "--db", url}}, "--handle"},
		{"handle and human", invocation{args: []string{"token", "create", "--handle", "a", "--human", "b", "--db", url}}, "either"},
		{"bad handle", invocation{args: []string{"token", "create", "--handle", "Alice!", "--db", url}}, `"Alice!"`},
		{"bad human name", invocation{args: []string{"token", "create", "--human", "Bob Smith", "--db", url}}, `"Bob Smith"`},
		{"bad rights", invocation{args: []string{"token", "create", "--handle", "a", "--rights", "read,fly", "--db", url}}, `"fly"`},
		{"no rights", invocation{args: []string{"token", "create", "--handle", "a", "--rights", "", "--db", url}}, "no rights"},
		{"rights for a human", invocation{args: []string{"token", "create", "--human", "b", "--rights", "read", "--db", url}}, "every right"},
		{"empty label", invocation{args: []string{"token", "create", "--handle", "a", "--label", "", "--db", url}}, "label"},
		{"bad realm", invocation{args: []string{"token", "create", "--handle", "a", "--realm", "Big Lab", "--db", url}}, "--realm"},
		{"bad realm from the environment", invocation{args: []string{"token", "list", "--db", url}, env: []string{"PARLEY_REALM=x:y"}}, "PARLEY_REALM"},
		{"unknown limit", invocation{args: []string{"token", "list", "--db", url}, env: []string{"PARLEY_LIMIT_NOPE=1"}}, "PARLEY_LIMIT_NOPE"},
		{"unknown config key", invocation{args: []string{"token", "list", "--db", url, "--config", badConfig}}, `unknown key "adress"`},
		{"revoke without id", invocation{args: []string{"token", "revoke", "--db", url}}, "exactly one"},
		{"revoke a non-number", invocation{args: []string{"token", "revoke", "seven", "--db", url}}, `"seven"`},
		{"revoke two", invocation{args: []string{"token", "revoke", "1", "2", "--db", url}}, "exactly one"},
		{"extra argument", invocation{args: []string{"token", "list", "extra", "--db", url}}, `"extra"`},
		{"migrate what", invocation{args: []string{"migrate", "sideways", "--db", url}}, `"sideways"`},
		{"bad user name", invocation{args: []string{"user", "add", "--name", "Eve!", "--password-stdin", "--db", url}, stdin: "long enough\n"}, `"Eve!"`},
		{"user without name", invocation{args: []string{"user", "add", "--password-stdin", "--db", url}, stdin: "long enough\n"}, "--name"},
		{"password not on a terminal", invocation{args: []string{"user", "add", "--name", "eve", "--db", url}}, "--password-stdin"},
		{"short password", invocation{args: []string{"user", "add", "--name", "eve", "--password-stdin", "--db", url}, stdin: "short\n"}, "at least 8"},
		{"two-line password", invocation{args: []string{"user", "add", "--name", "eve", "--password-stdin", "--db", url}, stdin: "long enough\nmore\n"}, "one line"},
		{"serve bad address", invocation{args: []string{"serve", "--addr", "nowhere", "--db", url}}, "--addr"},
		{"serve short session key", invocation{args: []string{"serve", "--session-key", "abc", "--db", url}}, "at least 32"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := tc.in.run(t)
			r.fails(t, "parley "+strings.Join(tc.in.args, " "), exitUsage, tc.want)
			if r.stdout != "" {
				t.Errorf("a usage error printed to standard output: %q", r.stdout)
			}
		})
	}
	// None of the refused commands created anything.
	if out := parley(t, "token", "list", "--json", "--db", url).ok(t, "token list").stdout; out != "[]\n" {
		t.Errorf("refused commands left tokens behind: %s", out)
	}
	if n, err := openDB(t, url).CountUsers(context.Background()); err != nil || n != 0 {
		t.Errorf("refused commands left %d users behind (%v)", n, err)
	}
}

func TestUnreachableDatabase(t *testing.T) {
	for kind, db := range unreachable {
		for _, args := range [][]string{
			{"migrate"},
			{"migrate", "status"},
			{"token", "create", "--handle", "alice"},
			{"token", "list"},
			{"token", "revoke", "1"},
			{"user", "add", "--name", "alice", "--password-stdin"},
			{"serve", "--addr", "127.0.0.1:0"},
		} {
			t.Run(string(kind)+" "+strings.Join(args, " "), func(t *testing.T) {
				t.Parallel()
				r := invocation{args: append(args, "--db", db.url), stdin: "a long password\n"}.run(t)
				r.fails(t, strings.Join(args, " "), exitRuntime, db.says)
				if strings.Contains(r.stderr, "secret") {
					t.Errorf("the error shows the database password: %q", r.stderr)
				}
			})
		}
	}
}
