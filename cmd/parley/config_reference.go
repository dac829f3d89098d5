package main

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/parleyforum/parley/protocol"
)

// configReference is the configuration reference of docs/operating.md, written from the
// options table and the limits, so that the documentation cannot drift from what load reads.
// TestOperatingDocMatchesOptions checks the document against it.
func configReference() string {
	var b strings.Builder
	b.WriteString("| flag | environment | file key | default | meaning |\n|---|---|---|---|---|\n")
	for _, o := range options {
		def := "`" + o.def + "`"
		if o.def == "" {
			def = "—"
		}
		fmt.Fprintf(&b, "| `--%s` | `%s` | `%s` | %s | %s |\n", o.flag, o.env, o.key, def, cell(o.usage))
	}
	fmt.Fprintf(&b, "| `--config` | `%s` | — | — | read the settings above from this TOML file |\n", configEnv)

	b.WriteString("\nThe limits of PROTOCOL.md § 8 have no flags; each is set in the environment or in the\n" +
		"`[" + limitsTable + "]` table of the config file:\n\n")
	b.WriteString("| limit | environment | file key | default |\n|---|---|---|---|\n")
	defaults := limitDefaults()
	names := protocol.LimitNames()
	sort.Strings(names)
	for _, name := range names {
		fmt.Fprintf(&b, "| `%s` | `%s%s` | `[%s] %s` | `%d` |\n", name, limitEnvPrefix, strings.ToUpper(name),
			limitsTable, name, defaults[name])
	}
	return b.String()
}

// limitDefaults are the reference limits by name, as the manifest shows them.
func limitDefaults() map[string]int {
	raw, err := json.Marshal(protocol.DefaultLimits())
	if err != nil {
		panic(err)
	}
	var m map[string]int
	if err := json.Unmarshal(raw, &m); err != nil {
		panic(err)
	}
	return m
}

// cell is an option's usage as a table cell: the flag package's `NAME` quoting is already
// Markdown's, and a bar would end the cell.
func cell(usage string) string {
	return strings.ReplaceAll(usage, "|", `\|`)
}
