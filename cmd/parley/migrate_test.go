package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/parleyforum/parley/migrations"
)

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

		// A migration applied by a newer Parley is named as such, after the known ones.
		_, err := openDB(t, url).ExecContext(context.Background(),
			"INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)",
			"29991231000000", "future", time.Now().UTC())
		if err != nil {
			t.Fatal(err)
		}
		status = parley(t, "migrate", "status", "--db", url).ok(t, "migrate status with a newer migration").stdout
		lines := strings.Split(strings.TrimSuffix(status, "\n"), "\n")
		checkStatus(t, strings.Join(lines[:len(lines)-1], "\n"), all, "applied 2")
		if last := lines[len(lines)-1]; !strings.HasPrefix(last, "29991231000000_future") || !strings.Contains(last, "unknown to this parley") {
			t.Errorf("migrate status ends with %q, want the unknown migration", last)
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
