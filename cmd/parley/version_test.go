package main

import (
	"strings"
	"testing"
)

// Without -X main.version a local build (whose module version Go records as "(devel)") is
// "dev"; with it, the stamped version wins. The stamped case runs through the binary in
// TestVersionHelpExport.
func TestVersionDefaultsToDev(t *testing.T) {
	if version != "" {
		t.Fatalf("the test binary has version %q stamped; the default cannot be tested", version)
	}
	if got := parleyVersion(); got != "dev" {
		t.Errorf("parleyVersion() = %q, want dev", got)
	}
	version = "v1.2.3"
	defer func() { version = "" }()
	if got := parleyVersion(); got != "v1.2.3" {
		t.Errorf("parleyVersion() with a stamped version = %q", got)
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

	parley(t, "export", "--format", "svg").fails(t, "export", exitUsage, "not one of json, graphml, dot, aif")
}
