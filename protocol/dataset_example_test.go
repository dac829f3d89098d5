package protocol_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/parleyforum/parley/storage"
	"github.com/parleyforum/parley/storage/storagetest"
)

// The researchers' worked example of docs/dialectic.md runs as written: docs/examples/
// dataset.py (python3's standard library only; `make python3` installs python3 where it is
// missing) checks a real dataset's hash and counts and prints its tables, which must be the
// server's own figures (read from the JSON export); one byte changed, it fails.
func TestDatasetWorkedExample(t *testing.T) {
	python, err := exec.LookPath("python3")
	if err != nil {
		t.Fatal("python3 is needed to run docs/examples/dataset.py: `make python3` installs it (make test runs it first)")
	}
	script, err := filepath.Abs("../docs/examples/dataset.py")
	if err != nil {
		t.Fatal(err)
	}
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		f := newDatasetForum(t, db)
		dir := t.TempDir()
		path := filepath.Join(dir, "parley.jsonl")
		data := f.dataset(t, storage.Scope{}, 0)
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		out, err := exec.Command(python, script, path).CombinedOutput()
		if err != nil {
			t.Fatalf("dataset.py: %v\n%s", err, out)
		}
		got := exampleTables(string(out))

		// The server's figures, from its other export.
		var buf bytes.Buffer
		if err := f.svc.WriteExport(context.Background(), 0, "json", &buf); err != nil {
			t.Fatal(err)
		}
		var exp struct {
			Claims []struct {
				State, Certainty string
				Attestations     []any
				Refutations      []any
				Verifications    []any
			}
			Messages []struct{ Kind string }
		}
		if err := json.Unmarshal(buf.Bytes(), &exp); err != nil {
			t.Fatal(err)
		}
		want := map[string]map[string]int{"claims by state": {}, "claims by certainty": {}, "stances by kind": {}, "messages by kind": {}}
		for _, c := range exp.Claims {
			want["claims by state"][c.State]++
			want["claims by certainty"][c.Certainty]++
			for kind, n := range map[string]int{"attest": len(c.Attestations), "refute": len(c.Refutations), "verify": len(c.Verifications)} {
				if n > 0 {
					want["stances by kind"][kind] += n
				}
			}
		}
		for _, m := range exp.Messages {
			want["messages by kind"][m.Kind]++
		}
		for title, rows := range want {
			if render(got[title]) != render(rows) {
				t.Errorf("%s: dataset.py says %s, the server %s", title, render(got[title]), render(rows))
			}
		}
		if !strings.HasPrefix(string(out), "ok ") {
			t.Errorf("dataset.py does not begin with its check: %s", out)
		}

		// One byte changed: the hash no longer holds, and the script fails.
		changed := bytes.Replace(data, []byte("It passes on main."), []byte("It passes on main!"), 1)
		if err := os.WriteFile(path, changed, 0o600); err != nil {
			t.Fatal(err)
		}
		out, err = exec.Command(python, script, path).CombinedOutput()
		if exit, ok := err.(*exec.ExitError); !ok || exit.ExitCode() != 1 || !strings.Contains(string(out), "they were changed") {
			t.Errorf("dataset.py on a changed dataset: %v\n%s", err, out)
		}
	})
}

// exampleTables reads dataset.py's tables: a title line, then "  name<TAB>count" rows.
func exampleTables(out string) map[string]map[string]int {
	tables := map[string]map[string]int{}
	var title string
	for _, line := range strings.Split(out, "\n") {
		if name, count, ok := strings.Cut(strings.TrimPrefix(line, "  "), "\t"); ok && strings.HasPrefix(line, "  ") {
			tables[title][name], _ = strconv.Atoi(count)
		} else if line != "" && !strings.HasPrefix(line, "ok ") {
			title = line
			tables[title] = map[string]int{}
		}
	}
	return tables
}

func render(rows map[string]int) string {
	var out []string
	for name, n := range rows {
		out = append(out, name+"="+strconv.Itoa(n))
	}
	sort.Strings(out)
	return strings.Join(out, " ")
}
