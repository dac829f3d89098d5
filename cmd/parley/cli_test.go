package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/parleyforum/parley/migrations"
	"github.com/parleyforum/parley/protocol"
	"github.com/parleyforum/parley/storage"
	"github.com/parleyforum/parley/storage/storagetest"
	"github.com/parleyforum/parley/web/password"
)

// These tests run the built binary, as an operator or a script would, and hold it to
// OPERATOR.md: exit statuses, one-line errors, output shapes.

// Unreachable databases (nothing listens on port 1, and /proc admits no new folders) and what
// the error says about each.
var unreachable = map[storage.Kind]struct{ url, says string }{
	storage.Postgres: {"postgres://parley:secret@127.0.0.1:1/parley?sslmode=disable", "cannot reach the database"},
	storage.SQLite:   {"sqlite:/proc/parley-test/parley.db", "/proc/parley-test/parley.db"},
}

type result struct {
	stdout, stderr string
	code           int
}

// invocation is one run of the binary: arguments, extra environment, standard input.
type invocation struct {
	args  []string
	env   []string
	stdin string
}

func parley(t *testing.T, args ...string) result {
	t.Helper()
	return invocation{args: args}.run(t)
}

// run executes the binary in a folder of its own (so that a default database would land
// there) with an environment free of the developer's PARLEY_* settings.
func (in invocation) run(t *testing.T) result {
	t.Helper()
	var stdin io.Reader
	if in.stdin != "" {
		stdin = strings.NewReader(in.stdin)
	}
	return in.runWith(t, stdin)
}

func (in invocation) runWith(t *testing.T, stdin io.Reader) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, parleyBinary, in.args...)
	cmd.Dir = t.TempDir()
	cmd.Env = append(cleanEnv(), in.env...)
	cmd.Stdin = stdin
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var exitErr *exec.ExitError
	r := result{stdout: stdout.String(), stderr: stderr.String()}
	switch {
	case err == nil:
	case errors.As(err, &exitErr):
		r.code = exitErr.ExitCode()
	default:
		t.Fatalf("running parley %s: %v", strings.Join(in.args, " "), err)
	}
	return r
}

func cleanEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "PARLEY_") {
			env = append(env, kv)
		}
	}
	return env
}

// ok fails the test unless the run succeeded with nothing on standard error.
func (r result) ok(t *testing.T, what string) result {
	t.Helper()
	if r.code != 0 || r.stderr != "" {
		t.Fatalf("%s: exit %d, stderr %q, stdout %q", what, r.code, r.stderr, r.stdout)
	}
	return r
}

// fails checks the exit status and that standard error is one line, "parley: …", mentioning
// want, and no stack trace.
func (r result) fails(t *testing.T, what string, code int, want string) {
	t.Helper()
	if r.code != code {
		t.Errorf("%s: exit %d, want %d (stderr %q)", what, r.code, code, r.stderr)
	}
	msg := strings.TrimSuffix(r.stderr, "\n")
	if strings.Contains(msg, "\n") || !strings.HasPrefix(msg, "parley: ") {
		t.Errorf("%s: stderr is not one line \"parley: …\": %q", what, r.stderr)
	}
	if strings.Contains(msg, "goroutine") || strings.Contains(msg, "panic") {
		t.Errorf("%s: stderr shows a crash: %q", what, r.stderr)
	}
	if !strings.Contains(msg, want) {
		t.Errorf("%s: stderr %q does not mention %q", what, r.stderr, want)
	}
}

// eachKind runs fn on a fresh, empty database URL of each kind.
func eachKind(t *testing.T, fn func(t *testing.T, url string)) {
	for _, kind := range storagetest.Kinds() {
		t.Run(string(kind), func(t *testing.T) {
			t.Parallel()
			fn(t, storagetest.NewURL(t, kind))
		})
	}
}

func openDB(t *testing.T, url string) *storage.DB {
	t.Helper()
	db, err := storage.Open(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

type createdToken struct {
	Token    string   `json:"token"`
	Identity string   `json:"identity"`
	Rights   []string `json:"rights"`
	Label    *string  `json:"label"`
	ID       int64    `json:"id"`
}

func decodeCreated(t *testing.T, out string) createdToken {
	t.Helper()
	// The exact set of keys is the contract: decode loosely and compare the keys too.
	var keys map[string]json.RawMessage
	if err := json.Unmarshal([]byte(out), &keys); err != nil {
		t.Fatalf("token create --json printed %q: %v", out, err)
	}
	got := slices.Sorted(maps.Keys(keys))
	if diff := cmp.Diff([]string{"id", "identity", "label", "rights", "token"}, got); diff != "" {
		t.Errorf("token create --json keys (-want +got):\n%s", diff)
	}
	var c createdToken
	if err := json.Unmarshal([]byte(out), &c); err != nil {
		t.Fatal(err)
	}
	return c
}

func TestTokenCommands(t *testing.T) {
	eachKind(t, func(t *testing.T, url string) {
		// An empty database: the command migrates it first. The secret comes alone on one line.
		out := parley(t, "token", "create", "--handle", "alice", "--db", url).ok(t, "token create").stdout
		plain := strings.TrimSuffix(out, "\n")
		if strings.ContainsAny(plain, " \n\t") || !strings.HasPrefix(plain, "parley_") || !strings.HasSuffix(out, "\n") {
			t.Fatalf("token create printed %q, want the secret alone on one line", out)
		}

		// Flags after and before, rights in any order, a label.
		out = parley(t, "token", "create", "--db", url, "--json", "--rights", "verify,read,lock,write", "--label", "KI Mod", "--handle", "mod").
			ok(t, "token create --json").stdout
		mod := decodeCreated(t, out)
		if mod.Identity != "ainotes:mod" || !slices.Equal(mod.Rights, []string{"read", "write", "lock", "verify"}) ||
			mod.Label == nil || *mod.Label != "KI Mod" || mod.ID == 0 || !strings.HasPrefix(mod.Token, "parley_") {
			t.Errorf("token create --json = %+v", mod)
		}

		// Default rights, no label: label is null. Another realm.
		bot := decodeCreated(t, parley(t, "--db="+url, "token", "create", "--handle=bot", "--json", "--realm", "lab").
			output(t))
		if bot.Identity != "lab:bot" || !slices.Equal(bot.Rights, []string{"read", "write"}) || bot.Label != nil {
			t.Errorf("token create --json with defaults = %+v", bot)
		}

		// A human's personal token holds every right.
		human := decodeCreated(t, parley(t, "token", "create", "--human", "carol", "--json", "--db", url).ok(t, "human token").stdout)
		if human.Identity != "human:carol" || !slices.Equal(human.Rights, []string{"read", "write", "lock", "verify"}) || human.Label != nil {
			t.Errorf("token create --human --json = %+v", human)
		}

		secrets := []string{plain, mod.Token, bot.Token, human.Token}
		checkSecretsNotStored(t, url, secrets)

		// The listing names every token, never a secret or its hash.
		list := parley(t, "token", "list", "--db", url).ok(t, "token list").stdout
		for _, want := range []string{"ainotes:alice", "ainotes:mod", "lab:bot", "human:carol", "KI Mod", "read,write,lock,verify"} {
			if !strings.Contains(list, want) {
				t.Errorf("token list does not show %q:\n%s", want, list)
			}
		}
		jsonList := parley(t, "token", "list", "--json", "--db", url).ok(t, "token list --json").stdout
		for _, s := range secrets {
			for _, out := range []string{list, jsonList} {
				if strings.Contains(out, s) || strings.Contains(out, protocol.HashTokenSecret(s)) {
					t.Fatalf("token list shows a secret or its hash:\n%s", out)
				}
			}
		}
		var listed []struct {
			ID        int64      `json:"id"`
			Identity  string     `json:"identity"`
			Human     bool       `json:"human"`
			Rights    []string   `json:"rights"`
			Label     *string    `json:"label"`
			CreatedAt time.Time  `json:"created_at"`
			RevokedAt *time.Time `json:"revoked_at"`
		}
		if err := json.Unmarshal([]byte(jsonList), &listed); err != nil {
			t.Fatalf("token list --json printed %q: %v", jsonList, err)
		}
		if len(listed) != 4 || listed[1].ID != mod.ID || !listed[3].Human || listed[0].Human || listed[1].CreatedAt.IsZero() {
			t.Errorf("token list --json = %+v", listed)
		}

		// Revoke with the id before the flags, and with the flags before the id.
		parley(t, "token", "revoke", strconv.FormatInt(mod.ID, 10), "--db", url).ok(t, "token revoke ID --db")
		parley(t, "token", "revoke", "--db", url, strconv.FormatInt(bot.ID, 10)).ok(t, "token revoke --db ID")
		parley(t, "token", "revoke", "--db", url, strconv.FormatInt(bot.ID, 10)).ok(t, "revoking again")
		db := openDB(t, url)
		for _, s := range []string{mod.Token, bot.Token} {
			if _, err := db.TokenByHash(context.Background(), protocol.HashTokenSecret(s)); !errors.Is(err, storage.ErrRevoked) {
				t.Errorf("a revoked token is found by its hash: err = %v", err)
			}
		}
		if _, err := db.TokenByHash(context.Background(), protocol.HashTokenSecret(human.Token)); err != nil {
			t.Errorf("revoking other tokens touched the human's: %v", err)
		}
		if err := json.Unmarshal([]byte(parley(t, "token", "list", "--json", "--db", url).stdout), &listed); err != nil {
			t.Fatal(err)
		}
		if listed[1].RevokedAt == nil || listed[2].RevokedAt == nil || listed[0].RevokedAt != nil {
			t.Errorf("token list --json after revoking = %+v", listed)
		}

		parley(t, "token", "revoke", "999", "--db", url).fails(t, "revoking an unknown id", exitRuntime, "no token with ID 999")
	})
}

// output is the standard output of a run that must succeed.
func (r result) output(t *testing.T) string {
	t.Helper()
	return r.ok(t, "parley").stdout
}

// checkSecretsNotStored reads every column of every token row: the secrets appear nowhere,
// their hashes do.
func checkSecretsNotStored(t *testing.T, url string, secrets []string) {
	t.Helper()
	db := openDB(t, url)
	var rows []map[string]any
	if err := db.NewSelect().Table("tokens").Scan(context.Background(), &rows); err != nil {
		t.Fatal(err)
	}
	if len(rows) != len(secrets) {
		t.Fatalf("%d token rows, want %d", len(rows), len(secrets))
	}
	stored := fmt.Sprint(rows)
	for _, s := range secrets {
		if strings.Contains(stored, s) {
			t.Fatalf("the tokens table holds a secret: %s", stored)
		}
		if !strings.Contains(stored, protocol.HashTokenSecret(s)) {
			t.Errorf("the tokens table lacks the hash of a secret: %s", stored)
		}
	}
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

func TestUserAdd(t *testing.T) {
	eachKind(t, func(t *testing.T, url string) {
		out := invocation{args: []string{"user", "add", "--password-stdin", "--db", url, "--name", "alice"}, stdin: "correct horse battery\n"}.
			run(t).ok(t, "user add").stdout
		if !strings.Contains(out, "human:alice") {
			t.Errorf("user add printed %q", out)
		}
		u, err := openDB(t, url).UserByName(context.Background(), "alice")
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(u.PasswordHash, "correct horse") {
			t.Fatal("the password is stored in clear")
		}
		for pw, want := range map[string]bool{"correct horse battery": true, "correct horse battery\n": false} {
			if ok, err := password.Verify(u.PasswordHash, pw); err != nil || ok != want {
				t.Errorf("Verify(stored, %q) = %v, %v; want %v", pw, ok, err, want)
			}
		}

		invocation{args: []string{"user", "add", "--name", "alice", "--password-stdin", "--db", url}, stdin: "another password"}.
			run(t).fails(t, "duplicate user", exitRuntime, "already exists")
		// Without a trailing newline the whole input is the password.
		invocation{args: []string{"user", "add", "--name", "bob", "--password-stdin", "--db", url}, stdin: "no newline here"}.
			run(t).ok(t, "user add without a newline")
		b, err := openDB(t, url).UserByName(context.Background(), "bob")
		if err != nil {
			t.Fatal(err)
		}
		if ok, _ := password.Verify(b.PasswordHash, "no newline here"); !ok {
			t.Error("the password read without a trailing newline does not verify")
		}
	})
}

func TestMigrate(t *testing.T) {
	all := migrations.All()
	eachKind(t, func(t *testing.T, url string) {
		status := parley(t, "migrate", "status", "--db", url).ok(t, "migrate status").stdout
		checkStatus(t, status, all, "pending")

		out := parley(t, "migrate", "--db", url).ok(t, "migrate").stdout
		for _, m := range all {
			if !strings.Contains(out, "applied "+m.Version+"_"+m.Name) {
				t.Errorf("migrate output %q does not name %s_%s", out, m.Version, m.Name)
			}
		}
		// "status" may come after the flags as well.
		status = parley(t, "migrate", "--db", url, "status").ok(t, "migrate --db URL status").stdout
		checkStatus(t, status, all, "applied 2")

		out = parley(t, "migrate", "--db", url).ok(t, "migrate again").stdout
		if !strings.Contains(out, "up to date") {
			t.Errorf("a second migrate printed %q", out)
		}
	})
}

// checkStatus wants one line per migration, oldest first, each showing state.
func checkStatus(t *testing.T, status string, all []migrations.Migration, state string) {
	t.Helper()
	lines := strings.Split(strings.TrimSuffix(status, "\n"), "\n")
	if len(lines) != len(all) {
		t.Fatalf("migrate status printed %d lines for %d migrations:\n%s", len(lines), len(all), status)
	}
	for i, m := range all {
		if !strings.HasPrefix(lines[i], m.Version+"_"+m.Name) || !strings.Contains(lines[i], state) {
			t.Errorf("migrate status line %q, want %s_%s … %s", lines[i], m.Version, m.Name, state)
		}
	}
}

func TestVersionHelpExport(t *testing.T) {
	if out := parley(t, "version").ok(t, "version").stdout; out != "parley "+testVersion+"\n" {
		t.Errorf("version printed %q, want the version set at build time", out)
	}
	parley(t, "version", "--db", "sqlite::memory:", "--realm", "lab").ok(t, "version takes --db and --realm")

	for _, args := range [][]string{{"help"}, {"--help"}, {"-h"}} {
		out := parley(t, args...).ok(t, strings.Join(args, " ")).stdout
		for _, c := range commands() {
			if !strings.Contains(out, c.name) {
				t.Errorf("parley %s does not list %q", strings.Join(args, " "), c.name)
			}
		}
	}
	for _, args := range [][]string{{"help", "token", "create"}, {"token", "create", "--help"}, {"token", "create", "-h"}} {
		out := parley(t, args...).ok(t, strings.Join(args, " ")).stdout
		for _, flag := range []string{"--handle", "--human", "--rights", "--label", "--json", "--db", "--realm", "--config"} {
			if !strings.Contains(out, flag) {
				t.Errorf("parley %s does not explain %s:\n%s", strings.Join(args, " "), flag, out)
			}
		}
	}
	if out := parley(t, "help", "token").ok(t, "help token").stdout; !strings.Contains(out, "token revoke ID") {
		t.Errorf("help token printed %q", out)
	}

	parley(t, "export", "--format", "dot").fails(t, "export", exitRuntime, "not available yet")
}

// The environment and a config file reach the commands, below the flags.
func TestConfigurationSources(t *testing.T) {
	eachKind(t, func(t *testing.T, url string) {
		config := filepath.Join(t.TempDir(), "parley.toml")
		if err := os.WriteFile(config, []byte(fmt.Sprintf("db = %q\nrealm = \"fromfile\"\n", url)), 0o600); err != nil {
			t.Fatal(err)
		}
		fromFile := decodeCreated(t, parley(t, "token", "create", "--handle", "a", "--json", "--config", config).output(t))
		fromEnv := decodeCreated(t, invocation{
			args: []string{"token", "create", "--handle", "b", "--json"},
			env:  []string{"PARLEY_CONFIG=" + config, "PARLEY_REALM=fromenv"},
		}.run(t).output(t))
		fromFlag := decodeCreated(t, invocation{
			args: []string{"token", "create", "--handle", "c", "--json", "--realm", "fromflag"},
			env:  []string{"PARLEY_DB=" + url, "PARLEY_REALM=fromenv"},
		}.run(t).output(t))
		got := []string{fromFile.Identity, fromEnv.Identity, fromFlag.Identity}
		if diff := cmp.Diff([]string{"fromfile:a", "fromenv:b", "fromflag:c"}, got); diff != "" {
			t.Errorf("identities (-want +got):\n%s", diff)
		}
		// All three went to the one database named by the file or the environment.
		if out := parley(t, "token", "list", "--db", url).ok(t, "token list").stdout; strings.Count(out, "\n") != 4 {
			t.Errorf("token list shows other than three tokens:\n%s", out)
		}
	})
}
