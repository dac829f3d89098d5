package main

import (
	"flag"
	"os"
	"strings"
	"testing"

	"github.com/parleyforum/parley/protocol"
)

var updateDocs = flag.Bool("update-docs", false, "rewrite the configuration reference in docs/operating.md")

const (
	operatingDoc   = "../../docs/operating.md"
	referenceBegin = "<!-- configuration reference: generated from cmd/parley/config.go, do not edit -->\n"
	referenceEnd   = "<!-- end of the configuration reference -->\n"
)

// docs/operating.md carries the configuration reference written from the options table.
// After changing an option: go test ./cmd/parley -run TestOperatingDocMatchesOptions -update-docs
func TestOperatingDocMatchesOptions(t *testing.T) {
	raw, err := os.ReadFile(operatingDoc)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(raw)
	before, rest, ok := strings.Cut(doc, referenceBegin)
	if !ok {
		t.Fatalf("%s lacks the line %q", operatingDoc, referenceBegin)
	}
	current, after, ok := strings.Cut(rest, referenceEnd)
	if !ok {
		t.Fatalf("%s lacks the line %q", operatingDoc, referenceEnd)
	}
	want := configReference()
	if current == want {
		return
	}
	if *updateDocs {
		if err := os.WriteFile(operatingDoc, []byte(before+referenceBegin+want+referenceEnd+after), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Errorf("the configuration reference in %s is stale; run go test ./cmd/parley -run TestOperatingDocMatchesOptions -update-docs", operatingDoc)
}

// Every option of the table is documented with all three of its names.
func TestEveryOptionHasThreeNames(t *testing.T) {
	seen := map[string]bool{}
	for _, o := range options {
		for _, name := range []string{"--" + o.flag, o.env, o.key} {
			if name == "--" || name == "" {
				t.Errorf("option %+v lacks a name", o)
			}
			if seen[name] {
				t.Errorf("%s names two options", name)
			}
			seen[name] = true
		}
		if !strings.HasPrefix(o.env, "PARLEY_") {
			t.Errorf("variable %s does not start with PARLEY_", o.env)
		}
	}
}

// Every limit is described in docs/operating.md's table of what each protects against and
// how to raise it.
func TestOperatingDocDescribesEveryLimit(t *testing.T) {
	raw, err := os.ReadFile(operatingDoc)
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(raw), "\n## Limits: what each protects against")
	if !ok {
		t.Fatalf("%s lacks the section on limits", operatingDoc)
	}
	section, _, _ = strings.Cut(section, "\n## ")
	for _, name := range protocol.LimitNames() {
		if !strings.Contains(section, "`"+name+"`") {
			t.Errorf("the limit %s is not described in %s's section on limits", name, operatingDoc)
		}
	}
}
