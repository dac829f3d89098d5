package main

import (
	"bytes"
	"crypto/ed25519"
	"fmt"
	"log/slog"
	"maps"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/parleyforum/parley/protocol"
	"github.com/parleyforum/parley/signed"
)

func TestConfigPrecedence(t *testing.T) {
	defaults := Config{Addr: "127.0.0.1:8080", DB: "sqlite:parley-data/parley.db", Realm: "ainotes", Limits: protocol.DefaultLimits(), LogFormat: "text"}
	key := func(c string) string { return strings.Repeat(c, 32) }
	withLimits := func(c Config, set func(l *protocol.Limits)) Config {
		set(&c.Limits)
		return c
	}
	for _, tc := range []struct {
		name  string
		flags map[string]string
		env   []string
		file  string // TOML; written to a file named by PARLEY_CONFIG unless flags name one
		want  Config
	}{
		{name: "defaults", want: defaults},
		{
			name: "file over defaults",
			file: "addr = \"0.0.0.0:9000\"\ndb = \"sqlite:/var/lib/parley.db\"\nrealm = \"lab\"\nsession_key = \"" + key("f") + "\"\n",
			want: Config{Addr: "0.0.0.0:9000", DB: "sqlite:/var/lib/parley.db", Realm: "lab", SessionKey: key("f"), Limits: protocol.DefaultLimits(), LogFormat: "text"},
		},
		{
			name: "environment over file",
			file: "addr = \"0.0.0.0:9000\"\nrealm = \"lab\"\nsession_key = \"" + key("f") + "\"\n",
			env:  []string{"PARLEY_ADDR=127.0.0.1:7000", "PARLEY_REALM=env", "PARLEY_SESSION_KEY=" + key("e")},
			want: Config{Addr: "127.0.0.1:7000", DB: defaults.DB, Realm: "env", SessionKey: key("e"), Limits: protocol.DefaultLimits(), LogFormat: "text"},
		},
		{
			name:  "flags over environment and file",
			file:  "addr = \"0.0.0.0:9000\"\ndb = \"sqlite:file.db\"\nrealm = \"lab\"\n",
			env:   []string{"PARLEY_ADDR=127.0.0.1:7000", "PARLEY_DB=sqlite:env.db", "PARLEY_REALM=env"},
			flags: map[string]string{"addr": "127.0.0.1:0", "db": "sqlite::memory:", "realm": "flag", "session-key": key("x")},
			want:  Config{Addr: "127.0.0.1:0", DB: "sqlite::memory:", Realm: "flag", SessionKey: key("x"), Limits: protocol.DefaultLimits(), LogFormat: "text"},
		},
		{
			name:  "each source fills what the ones above leave",
			file:  "addr = \"0.0.0.0:9000\"\ndb = \"sqlite:file.db\"\nrealm = \"lab\"\n",
			env:   []string{"PARLEY_DB=sqlite:env.db"},
			flags: map[string]string{"realm": "flag"},
			want:  Config{Addr: "0.0.0.0:9000", DB: "sqlite:env.db", Realm: "flag", Limits: protocol.DefaultLimits(), LogFormat: "text"},
		},
		{
			name: "public_read from the file, as a TOML boolean",
			file: "public_read = true\n",
			want: Config{Addr: defaults.Addr, DB: defaults.DB, Realm: defaults.Realm, PublicRead: true, Limits: protocol.DefaultLimits(), LogFormat: "text"},
		},
		{
			name:  "public_read: the flag over the environment",
			env:   []string{"PARLEY_PUBLIC_READ=1"},
			flags: map[string]string{"public-read": "false"},
			want:  defaults,
		},
		{
			name: "public_read from the environment",
			env:  []string{"PARLEY_PUBLIC_READ=1"},
			want: Config{Addr: defaults.Addr, DB: defaults.DB, Realm: defaults.Realm, PublicRead: true, Limits: protocol.DefaultLimits(), LogFormat: "text"},
		},
		{
			name: "an empty variable counts as unset",
			file: "realm = \"lab\"\n",
			env:  []string{"PARLEY_REALM=", "PARLEY_DB="},
			want: Config{Addr: defaults.Addr, DB: defaults.DB, Realm: "lab", Limits: protocol.DefaultLimits(), LogFormat: "text"},
		},
		{
			name: "limits: environment over file over defaults",
			file: "[limits]\nwrites_per_minute = 500\nbody_max_chars = 800\n",
			env:  []string{"PARLEY_LIMIT_WRITES_PER_MINUTE=100000", "PARLEY_LIMIT_verify_quorum=3"},
			want: withLimits(defaults, func(l *protocol.Limits) {
				l.WritesPerMinute = 100000
				l.BodyMaxChars = 800
				l.VerifyQuorum = 3
			}),
		},
		{
			name:  "--config over PARLEY_CONFIG",
			flags: map[string]string{"config": "FILE"},
			env:   []string{"PARLEY_CONFIG=/nonexistent/parley.toml"},
			file:  "realm = \"chosen\"\n",
			want:  Config{Addr: defaults.Addr, DB: defaults.DB, Realm: "chosen", Limits: protocol.DefaultLimits(), LogFormat: "text"},
		},
		{
			name:  "request deadline: flag over environment over file",
			file:  "request_deadline = \"9s\"\n",
			env:   []string{"PARLEY_REQUEST_DEADLINE=7s"},
			flags: map[string]string{"request-deadline": "1500ms"},
			want:  Config{Addr: defaults.Addr, DB: defaults.DB, Realm: defaults.Realm, Limits: protocol.DefaultLimits(), LogFormat: "text", RequestDeadline: 1500 * time.Millisecond},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			flags, env := configFixture(t, tc.flags, tc.env, tc.file)
			got, err := load(flags, env)
			if err != nil {
				t.Fatal(err)
			}
			if tc.want.RequestDeadline == 0 {
				tc.want.RequestDeadline = protocol.DefaultDeadline // every case but one leaves it
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("config (-want +got):\n%s", diff)
			}
		})
	}
}

func TestConfigErrors(t *testing.T) {
	for _, tc := range []struct {
		name  string
		flags map[string]string
		env   []string
		file  string
		want  string // in the error message
	}{
		{name: "bad realm flag", flags: map[string]string{"realm": "Not Valid"}, want: "--realm"},
		{name: "realm human", env: []string{"PARLEY_REALM=human"}, want: "PARLEY_REALM"},
		{name: "bad realm in file", file: "realm = \"a:b\"\n", want: "realm in"},
		{name: "address without port", flags: map[string]string{"addr": "localhost"}, want: "--addr"},
		{name: "address with a bad port", env: []string{"PARLEY_ADDR=127.0.0.1:99999"}, want: "PARLEY_ADDR"},
		{name: "empty database URL", flags: map[string]string{"db": ""}, want: "--db"},
		{name: "short session key", flags: map[string]string{"session-key": "short"}, want: "at least 32"},
		{name: "unknown key", file: "adress = \"x\"\n", want: `unknown key "adress"`},
		{name: "unknown table", file: "[limit]\nwrites_per_minute = 1\n", want: "unknown table [limit]"},
		{name: "unknown limit in file", file: "[limits]\nwrites_per_hour = 1\n", want: "writes_per_hour"},
		{name: "limit not a number", file: "[limits]\nwrites_per_minute = \"many\"\n", want: "whole number"},
		{name: "key not a string", file: "addr = 8080\n", want: "addr must be a string"},
		{name: "request deadline not a duration", env: []string{"PARLEY_REQUEST_DEADLINE=5"}, want: "PARLEY_REQUEST_DEADLINE"},
		{name: "request deadline too short", flags: map[string]string{"request-deadline": "1ms"}, want: "100ms to 10m"},
		{name: "not TOML", file: "addr = \n", want: "config file"},
		{name: "unknown limit in environment", env: []string{"PARLEY_LIMIT_WRITES_PER_HOUR=1"}, want: "PARLEY_LIMIT_WRITES_PER_HOUR"},
		{name: "limit below one", env: []string{"PARLEY_LIMIT_BODY_MAX_CHARS=0"}, want: "at least 1"},
		{name: "limits that contradict", env: []string{"PARLEY_LIMIT_INBOX_DEFAULT_ITEMS=200"}, want: "inbox_default_items"},
		{name: "more connections per address than in all", env: []string{"PARLEY_LIMIT_MAX_CONNECTIONS=10", "PARLEY_LIMIT_MAX_CONNECTIONS_PER_ADDRESS=64"}, want: "max_connections_per_address"},
		{name: "trusted proxy not an address", flags: map[string]string{"trusted-proxies": "10.0.0.0/8,proxy"}, want: `"proxy" is neither`},
		{name: "unknown log format", env: []string{"PARLEY_LOG_FORMAT=xml"}, want: "PARLEY_LOG_FORMAT"},
		{name: "unknown log level", file: "log_level = \"loud\"\n", want: "log_level in"},
		{name: "metrics address without port", flags: map[string]string{"metrics-addr": "localhost"}, want: "--metrics-addr"},
		{name: "listening database not Postgres", env: []string{"PARLEY_LISTEN_DB=sqlite:x.db"}, want: "PARLEY_LISTEN_DB"},
		{name: "public_read not a switch", env: []string{"PARLEY_PUBLIC_READ=maybe"}, want: "not true or false"},
		{name: "a string key as a boolean", file: "realm = true\n", want: "realm must be a string"},
		{name: "missing config file", env: []string{"PARLEY_CONFIG=/nonexistent/parley.toml"}, want: "cannot read the config file"},
		{name: "trusted realm without a key", flags: map[string]string{"trust-realm": "alpha"}, want: "is not NAME=DID"},
		{name: "trusted realm named human", env: []string{"PARLEY_TRUST_REALMS=human=" + alphaDID}, want: "not a realm's name"},
		{name: "trusted realm with a key of small order", env: []string{"PARLEY_TRUST_REALMS=alpha=" + weakDID}, want: "is not a realm key"},
		{name: "trusted realm with a verification method", flags: map[string]string{"trust-realm": "alpha=" + alphaDID + "#" + alphaDID[len("did:key:"):]}, want: "is not a realm key"},
		{name: "one realm, two keys", file: "trust_realms = \"alpha=" + alphaDID + ",alpha=" + betaDID + "\"\n", want: "trusted with two keys"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			flags, env := configFixture(t, tc.flags, tc.env, tc.file)
			_, err := load(flags, env)
			if err == nil {
				t.Fatal("load succeeded")
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q does not mention %q", err, tc.want)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("error %q has more than one line", err)
			}
		})
	}
}

// The settings of running an instance: proxies, logs, metrics and the listening connection.
func TestOperatingOptions(t *testing.T) {
	flags, env := configFixture(t, map[string]string{"trusted-proxies": "10.0.0.0/8, 192.168.1.7,::1", "log-level": "debug"},
		[]string{"PARLEY_LOG_FORMAT=json", "PARLEY_LISTEN_DB=postgres://parley@db:5432/parley"},
		"metrics_addr = \"127.0.0.1:9090\"\nlog_level = \"error\"\n")
	got, err := load(flags, env)
	if err != nil {
		t.Fatal(err)
	}
	want := Config{Addr: "127.0.0.1:8080", DB: "sqlite:parley-data/parley.db", Realm: "ainotes", Limits: protocol.DefaultLimits(),
		TrustedProxies: []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("192.168.1.7/32"), netip.MustParsePrefix("::1/128")},
		LogFormat:      "json", LogLevel: slog.LevelDebug, MetricsAddr: "127.0.0.1:9090", ListenDB: "postgres://parley@db:5432/parley", RequestDeadline: protocol.DefaultDeadline}
	if diff := cmp.Diff(want, got, cmp.Comparer(func(a, b netip.Prefix) bool { return a == b })); diff != "" {
		t.Errorf("config (-want +got):\n%s", diff)
	}
}

// configFixture writes file (if any) and names it by PARLEY_CONFIG, or by --config where the
// flags say "FILE".
func configFixture(t *testing.T, flags map[string]string, env []string, file string) (map[string]string, []string) {
	t.Helper()
	out := map[string]string{}
	for k, v := range flags {
		out[k] = v
	}
	env = append([]string(nil), env...)
	if file == "" {
		return out, env
	}
	path := filepath.Join(t.TempDir(), "parley.toml")
	if err := os.WriteFile(path, []byte(file), 0o600); err != nil {
		t.Fatal(err)
	}
	if out["config"] == "FILE" {
		out["config"] = path
	} else {
		env = append(env, "PARLEY_CONFIG="+path)
	}
	return out, env
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

// Two honest realm keys for the trust settings' cases.
var (
	alphaDID = signed.NewSigner(ed25519.NewKeyFromSeed(bytes.Repeat([]byte{'a'}, ed25519.SeedSize))).DID()
	betaDID  = signed.NewSigner(ed25519.NewKeyFromSeed(bytes.Repeat([]byte{'b'}, ed25519.SeedSize))).DID()
	// weakDID is the identity point's did:key, a key of small order.
	weakDID = signed.DIDKey(ed25519.PublicKey(append([]byte{1}, make([]byte, 31)...)))
)

// --trust-realm, repeated, joins its values; PARLEY_TRUST_REALMS and the file key take the
// joined form.
func TestTrustRealms(t *testing.T) {
	want := map[string]string{"alpha": alphaDID, "beta": betaDID}
	for _, tc := range []struct {
		name string
		args []string
		env  []string
		file string
	}{
		{name: "repeated flag", args: []string{"--trust-realm", "alpha=" + alphaDID, "--trust-realm", "beta=" + betaDID}},
		{name: "environment", env: []string{"PARLEY_TRUST_REALMS=alpha=" + alphaDID + ", beta=" + betaDID}},
		{name: "file", file: "trust_realms = \"alpha=" + alphaDID + ",beta=" + betaDID + "\"\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := tc.env
			if tc.file != "" {
				path := filepath.Join(t.TempDir(), "parley.toml")
				if err := os.WriteFile(path, []byte(tc.file), 0o600); err != nil {
					t.Fatal(err)
				}
				env = append(env, configEnv+"="+path)
			}
			f := newFlags(&stdio{environ: env}, &command{name: "import"})
			f.option("trust-realm")
			if _, err := f.parse(tc.args); err != nil {
				t.Fatal(err)
			}
			cfg, err := f.config()
			if err != nil {
				t.Fatal(err)
			}
			if !maps.Equal(cfg.TrustRealms, want) {
				t.Errorf("trusted %v, want %v", cfg.TrustRealms, want)
			}
		})
	}
}
