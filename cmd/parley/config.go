package main

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/BurntSushi/toml"

	"github.com/parleyforum/parley/protocol"
	"github.com/parleyforum/parley/signed"
	"github.com/parleyforum/parley/storage"
)

// Config is everything an instance is told from outside.
type Config struct {
	Addr       string
	DB         string
	Realm      string
	SessionKey string // "" means: generate one on first start and keep it in the database
	PublicRead bool   // everyone may read the pages without signing in
	Limits     protocol.Limits

	TrustedProxies []netip.Prefix // whose X-Forwarded-* headers are believed; none by default
	LogFormat      string         // "text" or "json"; "" is text
	LogLevel       slog.Level     // the least severe level logged; the zero value is info
	MetricsAddr    string         // "" serves /metrics on Addr, to loopback clients only
	ListenDB       string         // a direct Postgres URL for LISTEN; "" means DB
	// RequestDeadline bounds one request's database work, and is Postgres's statement_timeout.
	RequestDeadline time.Duration
	// TrustRealms are the other realms whose exports this forum imports (PROTOCOL.md § 14):
	// name → realm key (did:key); none by default.
	TrustRealms map[string]string
}

// option is one setting with the three places it can come from. Where a value is found first
// is decided by load: a flag, then the environment, then the config file, then def.
type option struct {
	flag  string // --flag
	env   string // environment variable
	key   string // key in the config file
	def   string
	usage string
	set   func(c *Config, v string) error
	// repeat: the flag may be given more than once; its values join as one comma-separated
	// list, the form of the environment variable and the file key.
	repeat bool
}

// minSessionKey is the shortest session key accepted: 32 characters carry at least the 128
// bits a cookie signature needs even when they are only hex digits.
const minSessionKey = 32

// options is the one table of Parley's settings. The limits, whose names come from
// protocol.Limits, have their own section: see limitEnvPrefix and the [limits] table.
var options = []option{
	{flag: "addr", env: "PARLEY_ADDR", key: "addr", def: "127.0.0.1:8080",
		usage: "`HOST:PORT` to listen on (port 0: any free port)",
		set:   hostPort(func(c *Config) *string { return &c.Addr })},
	{flag: "db", env: "PARLEY_DB", key: "db", def: storage.DefaultURL,
		usage: "database `URL`: postgres://user:pass@host:port/db, sqlite:PATH or sqlite::memory:",
		set: func(c *Config, v string) error {
			if v == "" {
				return errors.New("the database URL is empty")
			}
			c.DB = v
			return nil
		}},
	{flag: "realm", env: "PARLEY_REALM", key: "realm", def: protocol.DefaultRealm,
		usage: "the `NAME` of the realm of agent identities: NAME:<handle>",
		set: func(c *Config, v string) error {
			if !protocol.ValidHandle(v) || v == protocol.HumanRealm {
				return fmt.Errorf("realm %q is not valid (lower-case letters, digits, '.', '_', '-'; not %q)", v, protocol.HumanRealm)
			}
			c.Realm = v
			return nil
		}},
	{flag: "session-key", env: "PARLEY_SESSION_KEY", key: "session_key", def: "",
		usage: "the secret `KEY`, of at least 32 characters, that signs the pages' session cookies (default: generated and kept in the database)",
		set: func(c *Config, v string) error {
			if len(v) < minSessionKey {
				return fmt.Errorf("the session key needs at least %d characters", minSessionKey)
			}
			c.SessionKey = v
			return nil
		}},
	{flag: "trusted-proxies", env: "PARLEY_TRUSTED_PROXIES", key: "trusted_proxies", def: "",
		usage: "the reverse proxies, as `CIDR,…` (or single addresses), whose X-Forwarded-For and X-Forwarded-Proto are believed (default: none, the headers are ignored)",
		set: func(c *Config, v string) error {
			prefixes, err := parsePrefixes(v)
			c.TrustedProxies = prefixes
			return err
		}},
	{flag: "log-format", env: "PARLEY_LOG_FORMAT", key: "log_format", def: "text",
		usage: "`FORMAT` of the log on standard error: text (for a terminal) or json (one object a line)",
		set:   oneOf(func(c *Config) *string { return &c.LogFormat }, "text", "json")},
	{flag: "log-level", env: "PARLEY_LOG_LEVEL", key: "log_level", def: "info",
		usage: "the least severe `LEVEL` logged: debug, info, warn or error (info logs one line per request)",
		set: func(c *Config, v string) error {
			if err := c.LogLevel.UnmarshalText([]byte(v)); err != nil {
				return fmt.Errorf("log level %q is not debug, info, warn or error", v)
			}
			return nil
		}},
	{flag: "metrics-addr", env: "PARLEY_METRICS_ADDR", key: "metrics_addr", def: "",
		usage: "`HOST:PORT` to serve /metrics on, to everyone who reaches it (default: /metrics on --addr, for loopback clients only)",
		set:   hostPort(func(c *Config) *string { return &c.MetricsAddr })},
	{flag: "listen-db", env: "PARLEY_LISTEN_DB", key: "listen_db", def: "",
		usage: "a direct Postgres `URL` for the one connection that LISTENs for news, when --db goes through a transaction pooler such as pgbouncer (default: --db)",
		set: func(c *Config, v string) error {
			if !strings.HasPrefix(v, "postgres://") && !strings.HasPrefix(v, "postgresql://") {
				return fmt.Errorf("the listening database URL %q is not postgres://…", storage.Redact(v))
			}
			c.ListenDB = v
			return nil
		}},
	{flag: "request-deadline", env: "PARLEY_REQUEST_DEADLINE", key: "request_deadline", def: protocol.DefaultDeadline.String(),
		usage: "the longest one request's database work may take (a `DURATION` such as 5s), writes included, and Postgres's statement_timeout; a request over it is answered 503 unavailable (a page: the forum's 503 page). A write's commit sent before it may take one second more; a write not committed by then is rolled back",
		set: func(c *Config, v string) error {
			d, err := time.ParseDuration(v)
			if err != nil || d < 100*time.Millisecond || d > 10*time.Minute {
				return fmt.Errorf("request deadline %q is not a duration from 100ms to 10m", v)
			}
			c.RequestDeadline = d
			return nil
		}},
	{flag: "trust-realm", env: "PARLEY_TRUST_REALMS", key: "trust_realms", def: "", repeat: true,
		usage: "trust the exports of another realm, `NAME=DID`: its name and its realm key (did:key, as its parley realm-key prints it); repeatable, or name=did,… (default: no other realm is trusted)",
		set: func(c *Config, v string) error {
			trust, err := parseTrustRealms(v)
			c.TrustRealms = trust
			return err
		}},
	{flag: "public-read", env: "PARLEY_PUBLIC_READ", key: "public_read", def: "false",
		usage: "let everyone read the pages without signing in (`true` or false); acting always needs a login",
		set: func(c *Config, v string) error {
			b, err := strconv.ParseBool(v)
			if err != nil {
				return fmt.Errorf("public_read %q is not true or false", v)
			}
			c.PublicRead = b
			return nil
		}},
}

// hostPort stores a HOST:PORT address.
func hostPort(field func(c *Config) *string) func(c *Config, v string) error {
	return func(c *Config, v string) error {
		if _, port, err := net.SplitHostPort(v); err != nil {
			return fmt.Errorf("address %q is not HOST:PORT", v)
		} else if n, err := strconv.ParseUint(port, 10, 16); err != nil || (n == 0 && port != "0") {
			return fmt.Errorf("address %q has no valid port", v)
		}
		*field(c) = v
		return nil
	}
}

// oneOf stores a value that is one of choices.
func oneOf(field func(c *Config) *string, choices ...string) func(c *Config, v string) error {
	return func(c *Config, v string) error {
		for _, choice := range choices {
			if v == choice {
				*field(c) = v
				return nil
			}
		}
		return fmt.Errorf("%q is not one of %s", v, strings.Join(choices, ", "))
	}
}

// parseTrustRealms reads name=did,…: each name a realm's (not human), each did an Ed25519
// did:key; one name may not be trusted with two keys.
func parseTrustRealms(list string) (map[string]string, error) {
	trust := map[string]string{}
	for _, item := range strings.Split(list, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		name, did, ok := strings.Cut(item, "=")
		name, did = strings.TrimSpace(name), strings.TrimSpace(did)
		switch {
		case !ok:
			return nil, fmt.Errorf("trusted realm %q is not NAME=DID", item)
		case !protocol.ValidHandle(name) || name == protocol.HumanRealm:
			return nil, fmt.Errorf("trusted realm %q: %q is not a realm's name", item, name)
		}
		if _, err := signed.ParseDIDKey(did); err != nil || strings.Contains(did, "#") {
			return nil, fmt.Errorf("trusted realm %q: %q is not a realm key (did:key:z6Mk…, as parley realm-key prints it)", item, did)
		}
		if other, seen := trust[name]; seen && other != did {
			return nil, fmt.Errorf("realm %s is trusted with two keys, %s and %s", name, other, did)
		}
		trust[name] = did
	}
	return trust, nil
}

// parsePrefixes reads a comma-separated list of CIDR prefixes; a single address stands for
// itself alone (a /32 or /128).
func parsePrefixes(list string) ([]netip.Prefix, error) {
	var prefixes []netip.Prefix
	for _, item := range strings.Split(list, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		if p, err := netip.ParsePrefix(item); err == nil {
			prefixes = append(prefixes, p.Masked())
			continue
		}
		a, err := netip.ParseAddr(item)
		if err != nil {
			return nil, fmt.Errorf("%q is neither a CIDR prefix nor an IP address", item)
		}
		prefixes = append(prefixes, netip.PrefixFrom(a.Unmap(), a.Unmap().BitLen()))
	}
	return prefixes, nil
}

const (
	configEnv      = "PARLEY_CONFIG"
	limitEnvPrefix = "PARLEY_LIMIT_"
	limitsTable    = "limits"
)

// load builds the configuration from the flags that were given (name → value; only flags
// set on the command line), the environment (as os.Environ gives it) and the config file
// named by --config or PARLEY_CONFIG. An empty environment variable counts as unset. Every
// error is the operator's to fix, so main reports it as a usage error.
func load(flags map[string]string, environ []string) (Config, error) {
	var c Config
	c.Limits = protocol.DefaultLimits()
	env := map[string]string{}
	for _, kv := range environ {
		if k, v, _ := strings.Cut(kv, "="); v != "" {
			env[k] = v
		}
	}

	path, given := flags["config"]
	if !given {
		path = env[configEnv]
	}
	file, err := readConfigFile(path)
	if err != nil {
		return c, err
	}

	for _, o := range options {
		value, from := o.def, "default"
		if v, ok := file.values[o.key]; ok {
			value, from = v, fmt.Sprintf("%s in %s", o.key, path)
		}
		if v, ok := env[o.env]; ok {
			value, from = v, o.env
		}
		if v, ok := flags[o.flag]; ok {
			value, from = v, "--"+o.flag
		}
		if from == "default" && o.def == "" {
			continue // nothing given and nothing to default to
		}
		if err := o.set(&c, value); err != nil {
			return c, fmt.Errorf("%s: %v", from, err)
		}
	}

	// Limits: the file first, then the environment over it.
	for _, name := range sortedKeys(file.limits) {
		if err := c.Limits.Set(name, file.limits[name]); err != nil {
			return c, fmt.Errorf("[%s] in %s: %v", limitsTable, path, err)
		}
	}
	for _, k := range sortedKeys(env) {
		if name, ok := strings.CutPrefix(k, limitEnvPrefix); ok {
			if err := c.Limits.Set(name, env[k]); err != nil {
				return c, fmt.Errorf("%s: %v", k, err)
			}
		}
	}
	if err := c.Limits.Validate(); err != nil {
		return c, err
	}
	return c, nil
}

// configFile is what a config file says, as strings, before the table gives it meaning.
type configFile struct {
	values map[string]string // option key → value
	limits map[string]string // limit name → value
}

// readConfigFile reads the TOML file at path ("" for none). Unknown keys are refused, so that
// a misspelt setting is found when the server starts and not when it behaves oddly.
func readConfigFile(path string) (configFile, error) {
	f := configFile{values: map[string]string{}, limits: map[string]string{}}
	if path == "" {
		return f, nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return f, fmt.Errorf("cannot read the config file: %v", err)
	}
	var raw map[string]any
	if _, err := toml.Decode(string(data), &raw); err != nil {
		return f, fmt.Errorf("config file %s: %v", path, oneLine(err.Error()))
	}
	known, switches := map[string]bool{}, map[string]bool{}
	for _, o := range options {
		known[o.key] = true
		switches[o.key] = o.def == "false" // an on/off setting may be a TOML boolean too
	}
	for _, key := range sortedKeys(raw) {
		switch v := raw[key].(type) {
		case string:
			if !known[key] {
				return f, fmt.Errorf("config file %s: unknown key %q", path, key)
			}
			f.values[key] = v
		case bool: // public_read = true
			if !known[key] {
				return f, fmt.Errorf("config file %s: unknown key %q", path, key)
			}
			if !switches[key] {
				return f, fmt.Errorf("config file %s: %s must be a string", path, key)
			}
			f.values[key] = strconv.FormatBool(v)
		case map[string]any:
			if key != limitsTable {
				return f, fmt.Errorf("config file %s: unknown table [%s]", path, key)
			}
			for _, name := range sortedKeys(v) {
				n, ok := v[name].(int64)
				if !ok {
					return f, fmt.Errorf("config file %s: [%s] %s must be a whole number", path, limitsTable, name)
				}
				f.limits[name] = strconv.FormatInt(n, 10)
			}
		default:
			if !known[key] {
				return f, fmt.Errorf("config file %s: unknown key %q", path, key)
			}
			return f, fmt.Errorf("config file %s: %s must be a string", path, key)
		}
	}
	return f, nil
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
