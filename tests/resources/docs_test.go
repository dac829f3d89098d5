//go:build resources

package resources

import (
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
)

// The matrix's table in docs/reliability.md, between the markers of each database. The
// figures vary from run to run and machine to machine; what must stay as written is the
// table's shape — its rows, its cases, which cells hold and which do not — and the statuses
// of the case whose answers do not depend on timing (a row alone). So with PARLEY_WRITE_DOCS=1 the test writes the table it measured, and otherwise
// fails when the table written differs from this run's in any of those.

const docsPath = "../../docs/reliability.md"

var docsMu sync.Mutex // the two databases' runs share the file

func markers(kind string) (begin, end string) {
	return "<!-- resource matrix: " + kind + " -->", "<!-- end of the resource matrix: " + kind + " -->"
}

// document writes or checks the table of this database's run.
func (m *matrix) document() {
	m.t.Helper()
	table := m.table()
	docsMu.Lock()
	defer docsMu.Unlock()
	raw, err := os.ReadFile(docsPath)
	if err != nil {
		m.t.Fatal(err)
	}
	doc := string(raw)
	begin, end := markers(string(m.f.kind))
	i, j := strings.Index(doc, begin), strings.Index(doc, end)
	if i < 0 || j < i {
		m.t.Fatalf("docs/reliability.md has no markers %q … %q for the table of the resource matrix", begin, end)
	}
	written := doc[i+len(begin) : j]
	if os.Getenv("PARLEY_WRITE_DOCS") == "1" {
		doc = doc[:i+len(begin)] + "\n" + table + doc[j:]
		if err := os.WriteFile(docsPath, []byte(doc), 0o644); err != nil {
			m.t.Fatal(err)
		}
		return
	}
	if got, want := skeleton(written), skeleton(table); got != want {
		m.t.Errorf("the resource matrix's table for %s in docs/reliability.md is not this run's; write it with PARLEY_WRITE_DOCS=1 go test -run 'TestResourceMatrix/%s' ./tests/resources/\nwritten (shape):\n%s\nthis run (shape):\n%s",
			m.f.kind, m.f.kind, got, want)
	}
}

// table is the run as Markdown: the matrix, then the cases that measure many rows at once.
func (m *matrix) table() string {
	var b strings.Builder
	fmt.Fprintf(&b, "| route or tool | caller | class | %s |\n|%s\n", strings.Join(cases, " | "), strings.Repeat("---|", 3+len(cases)))
	for _, r := range m.rows {
		fmt.Fprintf(&b, "| `%s` | %s | %s |", r.name, r.who, r.class)
		for _, c := range cases {
			fmt.Fprintf(&b, " %s |", m.cells[r.name][c].text())
		}
		b.WriteString("\n")
	}
	b.WriteString("\n| many rows at once | growth | bound | what |\n|---|---|---|---|\n")
	for _, p := range m.phases {
		mark := ""
		if p.failed() {
			mark = "✗ "
		}
		fmt.Fprintf(&b, "| %s | %s%v | %.0f MB | %s |\n", p.name, mark, p.growth, p.bound, p.notes)
	}
	return b.String()
}

// text is a cell as the table shows it: growth · seconds · statuses, ✗ first when it failed.
func (c *cell) text() string {
	if c == nil {
		return "—"
	}
	var parts []string
	if c.memory != nil {
		parts = append(parts, c.memory.String())
	}
	parts = append(parts, fmt.Sprintf("%.1f s", c.seconds), c.statuses)
	text := strings.Join(parts, " · ")
	if c.failed {
		text = "✗ " + text
	}
	return text
}

// skeleton is what of a table must stay as written: every row's route, caller and class; for
// every cell whether it failed; the statuses of the case alone. (With the database hung, a
// read on SQLite answers 200 or, past the deadline, 503, as the machine is loaded.)
func skeleton(table string) string {
	var b strings.Builder
	for _, line := range strings.Split(table, "\n") {
		cols := strings.Split(strings.Trim(line, "| "), " | ")
		switch {
		case !strings.HasPrefix(line, "| ") || strings.HasPrefix(line, "|---"):
			continue
		case strings.HasPrefix(line, "| route or tool |"), strings.HasPrefix(line, "| many rows at once |"):
			b.WriteString(line) // the columns
		case strings.HasPrefix(line, "| `") && len(cols) == 3+len(cases): // a row: route, caller, class, the cases
			b.WriteString(strings.Join(cols[:3], " | "))
			for i, col := range cols[3:] {
				b.WriteString(" | " + mark(col))
				if cases[i] == caseAlone {
					parts := strings.Split(col, " · ")
					b.WriteString(" " + parts[len(parts)-1])
				}
			}
		default: // a case of many rows at once: its name, whether it held
			b.WriteString(cols[0] + " | " + mark(strings.Join(cols[1:], " | ")))
		}
		b.WriteString("\n")
	}
	return b.String()
}

// mark is whether a cell held (✓) or not (✗).
func mark(cell string) string {
	if strings.HasPrefix(cell, "✗") {
		return "✗"
	}
	return "✓"
}

// The check of the written table compares its shape, not its figures: a run that measured
// other figures passes it; one with a row more, a cell that failed, or another status alone
// does not.
func TestTheWrittenTableIsComparedByShape(t *testing.T) {
	head := "| route or tool | caller | class | " + strings.Join(cases, " | ") + " |\n|---|\n"
	row := func(alone, hung string) string {
		return "| `GET /v1/manifest` | anonymous | read | " + alone + " | 3 MB · 0.1 s · 200 | — | 30.0 s · 408 | 0.0 s · 200 | " + hung + " |\n"
	}
	phases := "\n| many rows at once | growth | bound | what |\n|---|---|---|---|\n| slow readers and writers | 900 MB | 952 MB | 15 readers |\n"
	written := head + row("1 MB · 0.0 s · 200", "0.1 s · 200") + phases
	for _, tc := range []struct {
		name, run string
		same      bool
	}{
		{"other figures", head + row("7 MB · 1.5 s · 200", "5.1 s · 503") + strings.Replace(phases, "900", "120", 1), true},
		{"a row more", head + row("1 MB · 0.0 s · 200", "0.1 s · 200") + strings.Replace(row("1 MB · 0.0 s · 200", "0.1 s · 200"), "manifest", "threads", 1) + phases, false},
		{"a cell over its bound", head + row("✗ 90 MB · 0.0 s · 200", "0.1 s · 200") + phases, false},
		{"another status alone", head + row("1 MB · 0.0 s · 404", "0.1 s · 200") + phases, false},
		{"a case of many rows over its bound", head + row("1 MB · 0.0 s · 200", "0.1 s · 200") + strings.Replace(phases, "900 MB", "✗ 990 MB", 1), false},
	} {
		if got := skeleton(written) == skeleton(tc.run); got != tc.same {
			t.Errorf("%s: the same shape %v, want %v\n%s\n%s", tc.name, got, tc.same, skeleton(written), skeleton(tc.run))
		}
	}
}
